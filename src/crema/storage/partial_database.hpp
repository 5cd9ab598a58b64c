// A database written under a temporary name beside its final one, so that a
// conversion that fails (bad input, a full disk, a kill) leaves no database
// under the final name, and no half-written one anywhere: the temporary
// folder is removed unless Publish() renamed it into place. An existing
// database of the final name is never overwritten.
#ifndef CREMA_STORAGE_PARTIAL_DATABASE_HPP_
#define CREMA_STORAGE_PARTIAL_DATABASE_HPP_

#include <string>

namespace crema {

class PartialDatabase {
 public:
  // Fails if a file or folder of either name exists.
  explicit PartialDatabase(const std::string& final_path);
  ~PartialDatabase();
  const std::string& temporary_path() const { return temporary_path_; }
  // Renames the (closed) database into place.
  void Publish();

 private:
  static void RequireFree(const std::string& path);
  const std::string final_path_;
  const std::string temporary_path_;
  bool published_ = false;
};

}  // namespace crema

#endif  // CREMA_STORAGE_PARTIAL_DATABASE_HPP_
