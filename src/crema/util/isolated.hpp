// Running a reader of untrusted files in a child process.
//
// Some libraries Crema reads user files with (libhdf5) can crash on a corrupt
// file: a fault inside them cannot be fixed here, and nothing checked before
// the call can rule it out. RunIsolated runs such a read in a forked child:
// the child returns its result as bytes, and a crash there becomes an Error
// naming the file in this process instead of ending it.
#ifndef CREMA_UTIL_ISOLATED_HPP_
#define CREMA_UTIL_ISOLATED_HPP_

#include <functional>
#include <string>

namespace crema {

// Runs `work` in a child process and returns the bytes it returned. An Error
// thrown by `work` is rethrown here with the same message; a child that dies
// (a signal, a sanitizer report, an exit without a result) or spends more
// than cpu_seconds of CPU time (a corrupt file can make a reader loop) is an
// Error "<what>: ..." saying how it ended. The child dies with this process.
// `work` must not rely on other threads (the child has only the calling
// thread) and must not write to state this process uses afterwards: the
// child's memory is a copy.
std::string RunIsolated(const std::string& what, int cpu_seconds,
                        const std::function<std::string()>& work);

}  // namespace crema

#endif  // CREMA_UTIL_ISOLATED_HPP_
