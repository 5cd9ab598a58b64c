// The image files the tool's image commands (classify, detect) take with
// --images: a comma-separated list of files, or one .txt file listing them,
// one per line, as Caffe's image lists do (a trailing " <label>" ignored).
#ifndef CREMA_TOOLS_IMAGE_LIST_HPP_
#define CREMA_TOOLS_IMAGE_LIST_HPP_

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "crema/util/io.hpp"
#include "split_list.hpp"

namespace crema {

// A text file's lines, trailing blanks and '\r' removed; `what` names the
// file in the error when it cannot be opened (a flag, say "--labels").
inline std::vector<std::string> ReadLines(const std::string& filename, const std::string& what) {
  std::ifstream file(filename);
  CREMA_REQUIRE(file, what << " " << filename << ": cannot open it");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(file, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    lines.push_back(line);
  }
  return lines;
}

// A list line's path: the line less a trailing " <integer>" label.
inline std::string PathOfListLine(const std::string& line) {
  const size_t space = line.find_last_of(' ');
  if (space == std::string::npos || space + 1 == line.size()) return line;
  const std::string tail = line.substr(space + 1);
  const bool is_label =
      std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
  return is_label ? line.substr(0, line.find_last_not_of(' ', space) + 1) : line;
}

// The files `images` (the --images flag's value) names; `command` names the
// tool command in the error when it names none.
inline std::vector<std::string> ImageFiles(const std::string& images, const std::string& command) {
  std::vector<std::string> items = SplitList(images);
  CREMA_REQUIRE(!items.empty(), command << ": give the images with --images=A.png,B.jpg or "
                                           "--images=LIST.txt");
  if (items.size() > 1 || !EndsWith(items[0], ".txt")) return items;
  std::vector<std::string> files;
  for (const std::string& line : ReadLines(items[0], "--images")) {
    if (!line.empty()) files.push_back(PathOfListLine(line));
  }
  CREMA_REQUIRE(!files.empty(), "--images " << items[0] << ": lists no image");
  return files;
}

}  // namespace crema

#endif  // CREMA_TOOLS_IMAGE_LIST_HPP_
