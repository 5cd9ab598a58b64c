"""Crema's schema against BVLC Caffe's (../shared/compat/caffe_schema_fields.tsv,
read off BVLC's caffe.proto): every BVLC field and enum value is in Crema's
schema under the same name, number, label and type, so BVLC's files decode
unchanged; and no field Crema adds (its own, or a fork's) takes a number BVLC
uses in that message, so none of BVLC's files can decode into the wrong field.
"""
import pytest

crema_pb2 = pytest.importorskip("crema.proto.crema_pb2")
from google.protobuf.descriptor import FieldDescriptor  # noqa: E402

LABELS = {FieldDescriptor.LABEL_OPTIONAL: "optional", FieldDescriptor.LABEL_REQUIRED: "required",
          FieldDescriptor.LABEL_REPEATED: "repeated"}
SCALARS = {FieldDescriptor.TYPE_DOUBLE: "double", FieldDescriptor.TYPE_FLOAT: "float",
           FieldDescriptor.TYPE_INT64: "int64", FieldDescriptor.TYPE_UINT64: "uint64",
           FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_UINT32: "uint32",
           FieldDescriptor.TYPE_BOOL: "bool", FieldDescriptor.TYPE_STRING: "string",
           FieldDescriptor.TYPE_BYTES: "bytes"}


def bvlc_schema(compat):
    """(fields, enums): {message: {field: (number, label, type)}} and
    {enum: {value: number}} from the TSV."""
    fields, enums = {}, {}
    for line in (compat / "caffe_schema_fields.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split("\t")
        if cells[1].startswith("ENUM"):
            # (top) ENUM Phase TRAIN 0, or Message.Enum ENUM VALUE 1
            name = cells[1].split()[1] if cells[0] == "(top)" else cells[0]
            enums.setdefault(name, {})[cells[2]] = int(cells[3])
        else:
            message, field, number, label, kind = cells[:5]
            fields.setdefault(message, {})[field] = (int(number), label.split()[0], kind)
    return fields, enums


def descriptor(path):
    """The message or enum descriptor of a dotted name (Message.Nested)."""
    first, *rest = path.split(".")
    found = crema_pb2.DESCRIPTOR.message_types_by_name.get(first) or \
        crema_pb2.DESCRIPTOR.enum_types_by_name.get(first)
    for part in rest:
        found = found.nested_types_by_name.get(part) or found.enum_types_by_name.get(part)
    return found


def type_name(field):
    if field.type in SCALARS:
        return SCALARS[field.type]
    return (field.message_type or field.enum_type).name


def test_every_bvlc_field_is_crema_field(compat):
    fields, _ = bvlc_schema(compat)
    wrong = []
    for message, bvlc in fields.items():
        ours = descriptor(message)
        assert ours is not None, "message %s missing" % message
        for name, (number, label, kind) in bvlc.items():
            field = ours.fields_by_name.get(name)
            got = None if field is None else (field.number, LABELS[field.label], type_name(field))
            if got != (number, label, kind.split(".")[-1]):
                wrong.append("%s.%s: BVLC %s, Crema %s" % (message, name, (number, label, kind), got))
    assert not wrong, "\n".join(wrong)


def test_every_bvlc_enum_value_is_crema_value(compat):
    _, enums = bvlc_schema(compat)
    for enum, values in enums.items():
        ours = descriptor(enum)
        assert ours is not None, "enum %s missing" % enum
        for value, number in values.items():
            assert value in ours.values_by_name, "%s.%s missing" % (enum, value)
            assert ours.values_by_name[value].number == number, "%s.%s" % (enum, value)


def test_no_added_field_takes_a_bvlc_number(compat):
    """Crema's own fields and the forks' fields keep clear of BVLC's numbers:
    the forks' parameters whose own number collides (interp_param,
    upsample_param, bn_param) are renumbered (docs/forks.md)."""
    fields, _ = bvlc_schema(compat)
    clashes = []
    for message, bvlc in fields.items():
        taken = {number: name for name, (number, _, _) in bvlc.items()}
        for field in descriptor(message).fields:
            if field.name not in bvlc and field.number in taken:
                clashes.append("%s.%s = %d is BVLC's %s" % (message, field.name, field.number,
                                                           taken[field.number]))
    assert not clashes, "\n".join(clashes)


def test_forks_fields_keep_their_numbers():
    """The forks' numbers, where Crema keeps them (docs/forks.md)."""
    layer = crema_pb2.LayerParameter.DESCRIPTOR.fields_by_name
    expected = {"annotated_data_param": 200, "multibox_loss_param": 201, "permute_param": 202,
                "prior_box_param": 203, "detection_output_param": 204,
                "detection_evaluate_param": 205, "norm_param": 206,
                "roi_pooling_param": 8266711, "psroi_pooling_param": 149,
                "shuffle_channel_param": 164, "proposal_param": 8266713}
    assert {name: layer[name].number for name in expected} == expected
