// The forks' fields a net or solver file sets, judged by their fork_use
// option in crema.proto: a REFUSED field set to anything but its default (or
// an enum value marked REFUSED) is one error naming where it is, the field
// and the fork; an IGNORED one (it changes nothing Crema computes, or, as
// Intel's quantization_param, is checked elsewhere and run in float) is said
// once in the log; the rest are
// computed with their fork's meaning by the layers and solvers that read them.
#ifndef CREMA_FORMAT_FORK_FIELDS_HPP_
#define CREMA_FORMAT_FORK_FIELDS_HPP_

#include <google/protobuf/message.h>

#include <string>

namespace crema {

// Checks `message` and every message set inside it, except the fields named
// in `skip` at its top level (the parts checked on their own, such as a
// net's layers). `where` starts the error ("layer 'conv1' (Convolution)").
void CheckForkFields(const google::protobuf::Message& message, const std::string& where,
                     std::initializer_list<const char*> skip = {});

}  // namespace crema

#endif  // CREMA_FORMAT_FORK_FIELDS_HPP_
