#!/usr/bin/python3
"""Writes the facts of a Caffe fork's schema as a table: one line per field and
per enum value, in the layout of BVLC's caffe_schema_fields.tsv.

    proto_to_table.py FORK.proto --fork NAME --source "repo path @ commit" > FORK.tsv
    proto_to_table.py FORK.pb ...  (a FileDescriptorSet: the schema a library
                                    was built with, e.g. read out of its binary)

The .proto is a copy of the fork's published caffe.proto kept outside the
project (only the facts it states are committed). protoc checks it and gives
the descriptor, so the table holds what protoc reads, not a text scrape.

Lines (tab-separated):
  field:      message  field  number  label  type  default
  enum value: Enum     ENUM   value   number
Nested messages and enums are named by their path (PoolingParameter.PoolMethod);
a field's type is the scalar name or the path of its message or enum type;
label is optional, required or repeated, with " packed" where the field is
packed; default is the text protoc keeps (empty when none).
"""
import argparse
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

SCALAR = {
    descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE: "double",
    descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT: "float",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT64: "int64",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT64: "uint64",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT32: "int32",
    descriptor_pb2.FieldDescriptorProto.TYPE_FIXED64: "fixed64",
    descriptor_pb2.FieldDescriptorProto.TYPE_FIXED32: "fixed32",
    descriptor_pb2.FieldDescriptorProto.TYPE_BOOL: "bool",
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING: "string",
    descriptor_pb2.FieldDescriptorProto.TYPE_BYTES: "bytes",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT32: "uint32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SFIXED32: "sfixed32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SFIXED64: "sfixed64",
    descriptor_pb2.FieldDescriptorProto.TYPE_SINT32: "sint32",
    descriptor_pb2.FieldDescriptorProto.TYPE_SINT64: "sint64",
}
LABEL = {
    descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL: "optional",
    descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED: "required",
    descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED: "repeated",
}


def read_descriptor(proto_path):
    if proto_path.endswith(".pb"):
        files = descriptor_pb2.FileDescriptorSet()
        with open(proto_path, "rb") as f:
            files.ParseFromString(f.read())
        return files.file[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "schema.pb")
        folder, name = os.path.split(os.path.abspath(proto_path))
        subprocess.run(["protoc", "-I", folder, "--descriptor_set_out=" + out, name],
                       check=True)
        files = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    return files.file[0]


def type_name(field, package):
    if field.type in SCALAR:
        return SCALAR[field.type]
    name = field.type_name.lstrip(".")
    prefix = package + "." if package else ""
    return name[len(prefix):] if name.startswith(prefix) else name


def enum_lines(enum, path):
    return ["%s\tENUM\t%s\t%d" % (path, value.name, value.number) for value in enum.value]


def message_lines(message, path, package):
    lines = []
    for field in message.field:
        label = LABEL[field.label]
        if field.options.packed:
            label += " packed"
        lines.append("\t".join([path, field.name, str(field.number), label,
                                type_name(field, package), field.default_value]))
    for enum in message.enum_type:
        lines += enum_lines(enum, path + "." + enum.name)
    for nested in message.nested_type:
        lines += message_lines(nested, path + "." + nested.name, package)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("proto")
    parser.add_argument("--fork", required=True, help="the fork's name, as the tables say it")
    parser.add_argument("--source", required=True, help="repository, path and commit read")
    args = parser.parse_args()
    schema = read_descriptor(args.proto)
    lines = []
    for enum in schema.enum_type:
        lines += enum_lines(enum, enum.name)
    for message in schema.message_type:
        lines += message_lines(message, message.name, schema.package)
    sys.stdout.write("# fork: %s\n# source: %s\n" % (args.fork, args.source))
    sys.stdout.write("# message\tfield\tnumber\tlabel\ttype\tdefault (enums: Enum\tENUM\tvalue\tnumber)\n")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
