#include "crema/layers/python_stand_ins.hpp"

#include <map>
#include <string>
#include <utility>

#include "crema/common.hpp"

namespace crema {

std::map<std::pair<std::string, std::string>, PythonStandIns::Translation>&
PythonStandIns::Table() {
  static std::map<std::pair<std::string, std::string>, Translation> table;
  return table;
}

void PythonStandIns::Add(const std::string& module, const std::string& layer,
                         Translation translation) {
  // Invariant: each Python layer has one stand-in, registered when the library loads.
  CHECK_EQ(Table().count({module, layer}), 0u)
      << "Python layer " << module << "." << layer << " has two native stand-ins";
  Table()[{module, layer}] = std::move(translation);
}

const PythonStandIns::Translation* PythonStandIns::Find(const PythonParameter& python_param) {
  auto it = Table().find({python_param.module(), python_param.layer()});
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace crema
