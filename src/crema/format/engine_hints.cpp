#include "crema/format/engine_hints.hpp"

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

namespace crema {
namespace {

using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The values of an Engine enum that name another runtime's body.
bool IsRuntimeHint(const EnumValueDescriptor* value) {
  const std::string& name = value->name();
  return name == "CAFFE" || name == "CUDNN" || name == "MKL2017" || name == "MKLDNN";
}

}  // namespace

int ReadEngineHintsAsDefault(LayerParameter* layer) {
  const auto* reflection = layer->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*layer, &fields);
  int changed = 0;
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) continue;
    Message* param = reflection->MutableMessage(layer, field);
    const FieldDescriptor* engine = param->GetDescriptor()->FindFieldByName("engine");
    if (!engine || engine->cpp_type() != FieldDescriptor::CPPTYPE_ENUM ||
        !param->GetReflection()->HasField(*param, engine)) {
      continue;
    }
    if (!IsRuntimeHint(param->GetReflection()->GetEnum(*param, engine))) continue;
    param->GetReflection()->SetEnumValue(param, engine, 0);  // DEFAULT in every Engine enum
    ++changed;
  }
  return changed;
}

}  // namespace crema
