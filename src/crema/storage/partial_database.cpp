#include "crema/storage/partial_database.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "crema/common.hpp"

namespace crema {

PartialDatabase::PartialDatabase(const std::string& final_path)
    : final_path_(final_path),
      temporary_path_(final_path + ".partial-" + std::to_string(getpid())) {
  RequireFree(final_path_);
  RequireFree(temporary_path_);
}

PartialDatabase::~PartialDatabase() {
  if (!published_) {
    std::error_code ignored;
    std::filesystem::remove_all(temporary_path_, ignored);
  }
}

void PartialDatabase::Publish() {
  RequireFree(final_path_);  // appeared while converting
  CREMA_REQUIRE(std::rename(temporary_path_.c_str(), final_path_.c_str()) == 0,
                final_path_ << ": cannot rename " << temporary_path_
                            << " into place: " << std::strerror(errno));
  published_ = true;
}

void PartialDatabase::RequireFree(const std::string& path) {
  struct stat info;
  CREMA_REQUIRE(lstat(path.c_str(), &info) != 0,
                path << ": already exists; refusing to overwrite a database");
}

}  // namespace crema
