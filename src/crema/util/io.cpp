#include "crema/util/io.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

namespace {

// protobuf builds the default of a string field (solver type "SGD", filler
// type "constant", ...) on its first use, under a lock ThreadSanitizer cannot
// see in the uninstrumented libprotobuf; solver threads reading one for the
// first time at once look like a race. Building them all while the library
// loads removes that first use from the threads.
const bool kStringDefaultsBuilt = [] {
  SolverParameter solver;
  const bool built = !solver.type().empty() && !solver.regularization_type().empty() &&
                     !FillerParameter().type().empty() &&
                     !WindowDataParameter().crop_mode().empty() &&
                     !V0LayerParameter().det_crop_mode().empty();
  return built;
}();

// Collects the text parser's first error with its position.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      std::ostringstream os;
      // The parser counts from 0; editors count from 1.
      os << (line + 1) << ":" << (column + 1) << ": " << message;
      first_error_ = os.str();
    }
  }
  bool has_error() const { return has_error_; }
  const std::string& first_error() const { return first_error_; }

 private:
  bool has_error_ = false;
  std::string first_error_;
};

// A text message larger than the limit is refused before it is parsed.
void RequireTextSize(size_t bytes, const std::string& origin) {
  CREMA_REQUIRE(bytes <= MaxTextFileBytes(),
                origin << ": " << bytes << " bytes of text, above the limit of "
                       << MaxTextFileBytes()
                       << " bytes for a prototxt or solver (CREMA_MAX_TEXT_FILE_BYTES raises it)");
}

// A directory opens, and reading it yields nothing, which would parse as an
// empty message: it is refused by name instead.
void RequireNotDirectory(const std::string& filename) {
  struct stat info;
  CREMA_REQUIRE(::stat(filename.c_str(), &info) != 0 || !S_ISDIR(info.st_mode),
                filename << ": is a directory; expected a file");
}

// A text file (a prototxt, a solver) is read whole: it must be a regular
// file (not a device such as /dev/zero, a pipe or a socket, which could be
// endless) of at most MaxTextFileBytes(), checked before the memory is taken.
std::string ReadWholeFile(const std::string& filename) {
  RequireNotDirectory(filename);
  struct stat info;
  CREMA_REQUIRE(::stat(filename.c_str(), &info) == 0,
                filename << ": cannot open file (" << std::strerror(errno) << ")");
  CREMA_REQUIRE(
      S_ISREG(info.st_mode),
      filename << ": not a regular file (a device, pipe or socket); expected a text file");
  const size_t limit = MaxTextFileBytes();
  RequireTextSize(static_cast<size_t>(info.st_size), filename);
  std::ifstream in(filename, std::ios::binary);
  CREMA_REQUIRE(in.good(), filename << ": cannot open file (" << std::strerror(errno) << ")");
  // At most one byte past the limit: a file that grew since is refused too.
  std::string contents(static_cast<size_t>(info.st_size) + 1, '\0');
  in.read(&contents[0], static_cast<std::streamsize>(contents.size()));
  CREMA_REQUIRE(!in.bad(), filename << ": read error");
  contents.resize(static_cast<size_t>(in.gcount()));
  if (contents.size() > static_cast<size_t>(info.st_size)) {
    // It grew while being read: read on, within the limit.
    std::string rest(limit + 1 - contents.size(), '\0');
    in.read(&rest[0], static_cast<std::streamsize>(rest.size()));
    contents.append(rest, 0, static_cast<size_t>(in.gcount()));
    RequireTextSize(contents.size(), filename);
  }
  return contents;
}

}  // namespace

size_t MaxTextFileBytes() {
  return static_cast<size_t>(LimitFromEnvironment("CREMA_MAX_TEXT_FILE_BYTES", uint64_t(64) << 20));
}

uint64_t LimitFromEnvironment(const char* name, uint64_t fallback) {
  const char* env = std::getenv(name);
  if (!env) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(env, &end, 10);
  CREMA_REQUIRE(end != env && *end == '\0' && value > 0 && env[0] != '-' && errno == 0,
                name << "='" << env << "' is not a positive whole number");
  return value;
}

std::string ReadTextFile(const std::string& filename) { return ReadWholeFile(filename); }

std::string FolderProblem(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string folder =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat info;
  if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return "the folder '" + folder + "' does not exist";
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    return "the folder '" + folder + "' is not writable (" + std::strerror(errno) + ")";
  }
  return "";
}

bool FileExists(const std::string& filename) {
  struct stat info;
  return ::stat(filename.c_str(), &info) == 0;
}

void ReadProtoFromString(const std::string& text, const std::string& origin,
                         google::protobuf::Message* proto) {
  RequireTextSize(text.size(), origin);
  google::protobuf::TextFormat::Parser parser;
  // As the binary parser's default: no prototxt nests 100 messages deep, and
  // an unbounded depth would let a crafted file exhaust the stack.
  parser.SetRecursionLimit(100);
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, proto)) {
    CREMA_FAIL(origin << ":" << (errors.has_error() ? errors.first_error() : "parse error")
                      << " (expected a " << proto->GetDescriptor()->name() << " in text format)");
  }
}

void ReadProtoFromTextFile(const std::string& filename, google::protobuf::Message* proto) {
  ReadProtoFromString(ReadWholeFile(filename), filename, proto);
}

void ReadProtoFromBinaryFile(const std::string& filename, google::protobuf::Message* proto) {
  RequireNotDirectory(filename);
  const int fd = ::open(filename.c_str(), O_RDONLY);
  CREMA_REQUIRE(fd >= 0, filename << ": cannot open file (" << std::strerror(errno) << ")");
  google::protobuf::io::FileInputStream raw_input(fd);
  raw_input.SetCloseOnDelete(true);
  google::protobuf::io::CodedInputStream coded_input(&raw_input);
  // Model files can exceed protobuf's default 64 MB guard (VGG is ~550 MB).
  coded_input.SetTotalBytesLimit(INT_MAX);
  const bool parsed = proto->ParseFromCodedStream(&coded_input);
  // A read error ends the stream early, which can parse as a shorter message.
  CREMA_REQUIRE(raw_input.GetErrno() == 0,
                filename << ": read error (" << std::strerror(raw_input.GetErrno()) << ")");
  CREMA_REQUIRE(parsed && coded_input.ConsumedEntireMessage(),
                filename << ": not a valid binary " << proto->GetDescriptor()->name()
                         << " (truncated or corrupt file)");
}

// The one way Crema writes a file: into a temporary beside it (same folder,
// so the rename stays on one file system), every write checked, then
// fsync, close and rename. On any failure the temporary is removed and the
// error names the file and the system's reason; the file as it was, if any,
// is untouched.
namespace {

[[noreturn]] void FailWriting(const std::string& filename, const std::string& temporary,
                              int error, const char* step) {
  ::unlink(temporary.c_str());
  CREMA_FAIL(filename << ": cannot write the file (" << step << ": " << std::strerror(error)
                      << "); the file as it was is left unchanged");
}

}  // namespace

std::string TemporaryFileFor(const std::string& filename) {
  return filename + ".tmp-" + std::to_string(::getpid());
}

void PublishTemporaryFile(const std::string& temporary, const std::string& filename) {
  const int fd = ::open(temporary.c_str(), O_RDONLY);
  if (fd < 0) FailWriting(filename, temporary, errno, "reopening the temporary");
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    FailWriting(filename, temporary, error, "fsync");
  }
  ::close(fd);  // read-only: nothing left to lose
  if (::rename(temporary.c_str(), filename.c_str()) != 0) {
    FailWriting(filename, temporary, errno, "rename");
  }
}

void WriteFileAtomically(const std::string& filename, const std::string& contents) {
  const std::string temporary = TemporaryFileFor(filename);
  const auto fail = [&](int error, const char* step) {
    FailWriting(filename, temporary, error, step);
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    const int error = errno;
    CREMA_FAIL(filename << ": cannot write the file (creating " << temporary << ": "
                        << std::strerror(error) << ")");
  }
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail(error, "write");
    }
    written += static_cast<size_t>(n);
  }
  // The data must be on disk before the rename makes it the file of record.
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail(error, "fsync");
  }
  if (::close(fd) != 0) fail(errno, "close");
  if (::rename(temporary.c_str(), filename.c_str()) != 0) fail(errno, "rename");
}

void WriteProtoToTextFile(const google::protobuf::Message& proto, const std::string& filename) {
  std::string text;
  // Invariant: printing into a string cannot fail (no stream to run out).
  CHECK(google::protobuf::TextFormat::PrintToString(proto, &text));
  WriteFileAtomically(filename, text);
}

void WriteProtoToBinaryFile(const google::protobuf::Message& proto, const std::string& filename) {
  std::string bytes;
  CREMA_REQUIRE(proto.SerializeToString(&bytes),
                filename << ": cannot serialise " << proto.GetDescriptor()->name());
  WriteFileAtomically(filename, bytes);
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace crema
