// The comma lists the tool's flags take (--weights=a,b, --stage=x,y,
// --images=a.png,b.png): the non-empty items in order.
#ifndef CREMA_TOOLS_SPLIT_LIST_HPP_
#define CREMA_TOOLS_SPLIT_LIST_HPP_

#include <sstream>
#include <string>
#include <vector>

namespace crema {

inline std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace crema

#endif  // CREMA_TOOLS_SPLIT_LIST_HPP_
