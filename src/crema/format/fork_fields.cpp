#include "crema/format/fork_fields.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {
namespace {

using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The value as the file would write it ("false", "FLOAT16", "3").
std::string ValueText(const Message& message, const FieldDescriptor* field) {
  std::string text;
  google::protobuf::TextFormat::PrintFieldValueToString(message, field,
                                                        field->is_repeated() ? 0 : -1, &text);
  return text;
}

// Whether a singular scalar holds something other than its default.
bool DiffersFromDefault(const Message& message, const FieldDescriptor* field) {
  const Reflection* reflection = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return reflection->GetInt32(message, field) != field->default_value_int32();
    case FieldDescriptor::CPPTYPE_INT64:
      return reflection->GetInt64(message, field) != field->default_value_int64();
    case FieldDescriptor::CPPTYPE_UINT32:
      return reflection->GetUInt32(message, field) != field->default_value_uint32();
    case FieldDescriptor::CPPTYPE_UINT64:
      return reflection->GetUInt64(message, field) != field->default_value_uint64();
    case FieldDescriptor::CPPTYPE_FLOAT:
      return reflection->GetFloat(message, field) != field->default_value_float();
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return reflection->GetDouble(message, field) != field->default_value_double();
    case FieldDescriptor::CPPTYPE_BOOL:
      return reflection->GetBool(message, field) != field->default_value_bool();
    case FieldDescriptor::CPPTYPE_ENUM:
      return reflection->GetEnumValue(message, field) != field->default_value_enum()->number();
    case FieldDescriptor::CPPTYPE_STRING:
      return reflection->GetString(message, field) != field->default_value_string();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return true;
  }
  return true;
}

// An IGNORED field or value is said once per process and name: a net of
// fifty layers with NVCaffe's forward_type logs one line, not fifty.
void SayIgnoredOnce(const std::string& what, const std::string& forks) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (!said.insert(what).second) return;
  LOG(INFO) << what << " (from " << forks
            << ") is accepted and not acted on (docs/forks.md says why for each)";
}

void CheckEnumValues(const Message& message, const FieldDescriptor* field, const std::string& where,
                     const std::string& path) {
  const Reflection* reflection = message.GetReflection();
  const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
  for (int i = 0; i < count; ++i) {
    const EnumValueDescriptor* value = field->is_repeated()
                                           ? reflection->GetRepeatedEnum(message, field, i)
                                           : reflection->GetEnum(message, field);
    const ForkFieldUse use = value->options().GetExtension(value_fork_use);
    const std::string forks = value->options().GetExtension(value_from_fork);
    CREMA_REQUIRE(use != REFUSED, where << ": " << path << ": " << value->name() << " is from "
                                        << forks << "; Crema does not implement it "
                                        << "(docs/forks.md lists what it reads of each fork)");
    if (use == IGNORED) SayIgnoredOnce(path + ": " + value->name(), forks);
  }
}

void CheckFields(const Message& message, const std::string& where, const std::string& prefix,
                 std::initializer_list<const char*> skip) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (std::find(skip.begin(), skip.end(), field->name()) != skip.end()) continue;
    const std::string path = prefix + field->name();
    const ForkFieldUse use = field->options().GetExtension(fork_use);
    const std::string forks = field->options().GetExtension(from_fork);
    const bool differs = field->is_repeated() || DiffersFromDefault(message, field);
    CREMA_REQUIRE(use != REFUSED || !differs,
                  where << ": " << path
                        << (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                ? std::string()
                                : ": " + ValueText(message, field))
                        << " is from " << forks << "; Crema does not implement it "
                        << "(docs/forks.md lists what it reads of each fork)");
    if (use == IGNORED) {
      SayIgnoredOnce(path, forks);
      continue;  // nothing in it matters
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      CheckEnumValues(message, field, where, path);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
      for (int i = 0; i < count; ++i) {
        const Message& inner = field->is_repeated()
                                   ? reflection->GetRepeatedMessage(message, field, i)
                                   : reflection->GetMessage(message, field);
        CheckFields(inner, where, path + ".", {});
      }
    }
  }
}

}  // namespace

void CheckForkFields(const Message& message, const std::string& where,
                     std::initializer_list<const char*> skip) {
  CheckFields(message, where, "", skip);
}

}  // namespace crema
