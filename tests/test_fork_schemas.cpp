// crema.proto against the schemas the forks of Caffe published
// (tests/fork_schemas/*.tsv: the facts of each fork's caffe.proto, one line
// per field and enum value). Every field and enum value of every fork must
// parse in text format under its own name and message path; a field takes
// one of its forks' numbers, or, where it takes none, each of those numbers
// belongs to another field of the message (BVLC's, or a field of a fork that
// docs/forks.md ranks first); each field's fork_use says whether Crema computes it,
// ignores it or refuses it. The test prints the coverage, fork by fork.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crema/proto/crema.pb.h"
#include "test_common.hpp"

namespace crema {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

struct ForkField {
  std::string message, name, label, type;
  int number = 0;
};
struct ForkValue {
  std::string enum_path, name;
  int number = 0;
};
struct ForkSchema {
  std::string key, title;
  std::vector<ForkField> fields;
  std::vector<ForkValue> values;
  std::set<std::string> types;  // every message and enum path it defines
};

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, '\t')) cells.push_back(cell);
  return cells;
}

ForkSchema ReadSchema(const std::filesystem::path& path) {
  ForkSchema schema;
  schema.key = path.stem().string();
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# fork: ", 0) == 0) schema.title = line.substr(8);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = Split(line);
    if (cells.size() >= 4 && cells[1] == "ENUM") {
      schema.values.push_back({cells[0], cells[2], std::stoi(cells[3])});
      schema.types.insert(cells[0]);
    } else if (cells.size() >= 5) {
      schema.fields.push_back({cells[0], cells[1], cells[3], cells[4], std::stoi(cells[2])});
      schema.types.insert(cells[0]);
    }
  }
  return schema;
}

std::vector<ForkSchema> ReadSchemas() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourceDir() + "/tests/fork_schemas")) {
    if (entry.path().extension() == ".tsv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<ForkSchema> schemas;
  for (const auto& file : files) schemas.push_back(ReadSchema(file));
  return schemas;
}

bool IsScalar(const std::string& type) {
  static const std::set<std::string> scalars = {
      "double", "float", "int64",  "uint64",   "int32",    "fixed64", "fixed32", "bool",
      "string", "bytes", "uint32", "sfixed32", "sfixed64", "sint32",  "sint64"};
  return scalars.count(type) > 0;
}

// Where a fork's message and enum paths lead in Crema's schema: the same
// path where Crema has it, else the type of the field that holds it (OpenCV's
// norm_param is a NormalizeBBoxParameter, Crema's a NormalizeParameter).
class TypeMap {
 public:
  explicit TypeMap(const ForkSchema& schema) : schema_(schema) {
    for (const std::string& path : schema.types) {
      if (Pool()->FindMessageTypeByName("crema." + path)) messages_[path] = path;
      if (Pool()->FindEnumTypeByName("crema." + path)) enums_[path] = path;
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (const ForkField& field : schema.fields) {
        const FieldDescriptor* ours = Field(field);
        if (!ours || IsScalar(field.type)) continue;
        const std::string path = ForkTypePath(field);
        if (ours->message_type() && !messages_.count(path)) {
          messages_[path] = ours->message_type()->full_name().substr(6);
          grew = true;
        } else if (ours->enum_type() && !enums_.count(path)) {
          enums_[path] = ours->enum_type()->full_name().substr(6);
          grew = true;
        }
      }
    }
  }

  const Descriptor* Message(const std::string& fork_path) const {
    auto it = messages_.find(fork_path);
    return it == messages_.end() ? nullptr : Pool()->FindMessageTypeByName("crema." + it->second);
  }
  const EnumDescriptor* Enum(const std::string& fork_path) const {
    auto it = enums_.find(fork_path);
    return it == enums_.end() ? nullptr : Pool()->FindEnumTypeByName("crema." + it->second);
  }
  const FieldDescriptor* Field(const ForkField& field) const {
    const Descriptor* message = Message(field.message);
    return message ? message->FindFieldByName(field.name) : nullptr;
  }
  // A field's type as a path of the fork (BVLC's table gives nested types
  // by their short name: "Engine" in ConvolutionParameter).
  std::string ForkTypePath(const ForkField& field) const {
    if (schema_.types.count(field.type)) return field.type;
    for (std::string scope = field.message; !scope.empty();) {
      if (schema_.types.count(scope + "." + field.type)) return scope + "." + field.type;
      const size_t dot = scope.rfind('.');
      scope = dot == std::string::npos ? "" : scope.substr(0, dot);
    }
    return field.type;
  }

 private:
  static const google::protobuf::DescriptorPool* Pool() {
    return google::protobuf::DescriptorPool::generated_pool();
  }
  const ForkSchema& schema_;
  std::map<std::string, std::string> messages_, enums_;
};

// A value of the field's type in text format, to parse as a user's file would.
std::string SampleText(const FieldDescriptor* field) {
  const std::string& name = field->name();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return name + " { }";
    case FieldDescriptor::CPPTYPE_ENUM:
      return name + ": " + field->enum_type()->value(0)->name();
    case FieldDescriptor::CPPTYPE_BOOL:
      return name + ": true";
    case FieldDescriptor::CPPTYPE_STRING:
      return name + ": \"text\"";
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return name + ": 0.5";
    default:
      return name + ": 1";
  }
}

// Parsed alone: the message's required fields may be missing.
bool ParsesByName(const Descriptor* message, const FieldDescriptor* field) {
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<google::protobuf::Message> parsed(factory.GetPrototype(message)->New());
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  return parser.ParseFromString(SampleText(field), parsed.get());
}

bool SameType(const TypeMap& types, const ForkField& fork, const FieldDescriptor* ours) {
  if (IsScalar(fork.type)) return fork.type == ours->type_name();
  const std::string path = types.ForkTypePath(fork);
  if (ours->message_type()) return types.Message(path) == ours->message_type();
  return types.Enum(path) == ours->enum_type();
}

// Fork numbers Crema leaves free on purpose: the message there is another
// fork's of the same name, which would decode into Crema's as garbage.
const std::set<std::pair<std::string, std::string>> kNumbersAvoided = {
    {"xilinx_vitis_ai", "LayerParameter.proposal_param"},  // Xilinx's own ProposalParameter
};

struct Coverage {
  int fields = 0, values = 0, parsed = 0, values_parsed = 0, same = 0, values_same = 0;
  int honoured = 0, ignored = 0, refused = 0;
};

TEST(ForkSchemasTest, EveryForkFieldParsesByNameAndKeepsItsNumberUnlessTaken) {
  const std::vector<ForkSchema> schemas = ReadSchemas();
  ASSERT_GE(schemas.size(), 14u) << "tests/fork_schemas/ should hold BVLC's and 13 forks' tables";
  // The numbers the forks give each field of Crema's messages: a field
  // holds one, so the forks other than the one it follows lose theirs.
  std::map<const FieldDescriptor*, std::set<int>> fork_numbers;
  for (const ForkSchema& schema : schemas) {
    const TypeMap types(schema);
    for (const ForkField& fork : schema.fields) {
      if (const FieldDescriptor* ours = types.Field(fork)) fork_numbers[ours].insert(fork.number);
    }
  }
  std::vector<std::string> problems;
  std::ostringstream table;
  table << "| schema | fields | enum values | parsed by name | same number and type | honoured "
           "| ignored | refused |\n|---|---|---|---|---|---|---|---|\n";
  for (const ForkSchema& schema : schemas) {
    const TypeMap types(schema);
    Coverage c;
    for (const ForkField& fork : schema.fields) {
      ++c.fields;
      const std::string where = schema.key + ": " + fork.message + "." + fork.name;
      const Descriptor* message = types.Message(fork.message);
      const FieldDescriptor* ours = types.Field(fork);
      if (!ours || !ParsesByName(message, ours)) {
        problems.push_back(where + " does not parse by name");
        continue;
      }
      ++c.parsed;
      const bool same_type = SameType(types, fork, ours);
      if (ours->number() == fork.number && same_type) ++c.same;
      if (!fork_numbers[ours].count(ours->number()) && !message->FindFieldByNumber(fork.number) &&
          !kNumbersAvoided.count({schema.key, fork.message + "." + fork.name})) {
        problems.push_back(where + ": Crema numbers it " + std::to_string(ours->number()) +
                           " and leaves the fork's " + std::to_string(fork.number) + " free");
      }
      switch (ours->options().GetExtension(fork_use)) {
        case IGNORED:
          ++c.ignored;
          break;
        case REFUSED:
          ++c.refused;
          break;
        default:
          ++c.honoured;
      }
    }
    for (const ForkValue& value : schema.values) {
      ++c.values;
      const EnumDescriptor* ours = types.Enum(value.enum_path);
      const auto* found = ours ? ours->FindValueByName(value.name) : nullptr;
      if (!found) {
        problems.push_back(schema.key + ": enum value " + value.enum_path + "." + value.name +
                           " does not parse by name");
        continue;
      }
      ++c.values_parsed;
      if (found->number() == value.number) ++c.values_same;
    }
    table << "| " << schema.title << " | " << c.fields << " | " << c.values << " | " << c.parsed
          << " + " << c.values_parsed << " | " << c.same << " + " << c.values_same << " | "
          << c.honoured << " | " << c.ignored << " | " << c.refused << " |\n";
  }
  std::cout << table.str();
  std::string listed;
  for (size_t i = 0; i < std::min<size_t>(problems.size(), 40); ++i) listed += "\n  " + problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << listed;
}

}  // namespace
}  // namespace crema
