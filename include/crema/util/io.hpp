// Reading and writing protobuf files: text prototxt and binary (.caffemodel,
// .solverstate, .binaryproto). Reads report a missing or malformed file as a
// user error (Error) naming the file and, for text, the line and column.
// Writes go to a temporary file that is renamed into place, so a crash while
// writing leaves the previous file intact.
#ifndef CREMA_UTIL_IO_HPP_
#define CREMA_UTIL_IO_HPP_

#include <google/protobuf/message.h>

#include <cstdint>
#include <string>

namespace crema {

void ReadProtoFromTextFile(const std::string& filename, google::protobuf::Message* proto);
void ReadProtoFromBinaryFile(const std::string& filename, google::protobuf::Message* proto);
// The largest prototxt or solver text read or parsed: 64 MiB, or
// CREMA_MAX_TEXT_FILE_BYTES from the environment.
size_t MaxTextFileBytes();
// A text file (XML annotations, lists) read whole under the same rules as a
// prototxt: a regular file of at most MaxTextFileBytes().
std::string ReadTextFile(const std::string& filename);
// Parses prototxt held in a string; `origin` names it in error messages.
void ReadProtoFromString(const std::string& text, const std::string& origin,
                         google::protobuf::Message* proto);

void WriteProtoToTextFile(const google::protobuf::Message& proto, const std::string& filename);
void WriteProtoToBinaryFile(const google::protobuf::Message& proto, const std::string& filename);

// Writes bytes to filename atomically (temporary file, fsync, rename).
void WriteFileAtomically(const std::string& filename, const std::string& contents);
// For a writer that builds its file in steps (HDF5Output): the temporary
// beside `filename` to build it in, and, once it is complete and closed,
// the fsync and rename that make it the file; on failure the temporary is
// removed and the error names the file and the system's reason.
std::string TemporaryFileFor(const std::string& filename);
void PublishTemporaryFile(const std::string& temporary, const std::string& filename);

bool FileExists(const std::string& filename);

// Why a file could not be written at `path` as far as its folder tells:
// "the folder 'F' does not exist" or "the folder 'F' is not writable
// (reason)"; "" when the folder is there and writable. For checks made
// before the work whose result the file holds.
std::string FolderProblem(const std::string& path);

// A limit a user may raise: the positive whole number in the environment
// variable `name`, else `fallback`; any other value there is a user error
// naming the variable.
uint64_t LimitFromEnvironment(const char* name, uint64_t fallback);

// Whether a file name ends with an extension such as ".h5".
bool EndsWith(const std::string& text, const std::string& suffix);

}  // namespace crema

#endif  // CREMA_UTIL_IO_HPP_
