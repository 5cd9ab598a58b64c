#include "crema/util/isolated.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "crema/common.hpp"

namespace crema {

namespace {

// The first byte the child sends says what follows.
constexpr char kResult = 'R';
constexpr char kError = 'E';

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing to tell anyone
    done += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// In the child: bound its CPU time and its life by the parent's, run the
// work, send its outcome, and leave without running this process's exit
// handlers or destructors (they belong to the parent).
[[noreturn]] void RunChild(int fd, int cpu_seconds, const std::function<std::string()>& work) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const rlimit limit{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds) + 1};
  setrlimit(RLIMIT_CPU, &limit);
  std::string message;
  try {
    message = kResult + work();
  } catch (const std::exception& e) {
    message = kError + std::string(e.what());
  }
  WriteAll(fd, message);
  close(fd);
  _exit(0);
}

std::string HowItDied(int status, int cpu_seconds) {
  // The soft limit's SIGXCPU ends the child (its default action).
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    return "the reader was stopped after " + std::to_string(cpu_seconds) +
           " s of CPU time on this file (signal " + std::to_string(WTERMSIG(status)) +
           "); the file is corrupt or not what it claims to be";
  }
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "the reader crashed on this file (signal " + std::to_string(signal) + ", " +
           strsignal(signal) + "); the file is corrupt or not what it claims to be";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return "the reader failed on this file (exit status " + std::to_string(WEXITSTATUS(status)) +
           "); the file is corrupt or not what it claims to be";
  }
  return "the reader ended without a result; the file is corrupt or not what it claims to be";
}

}  // namespace

std::string RunIsolated(const std::string& what, int cpu_seconds,
                        const std::function<std::string()>& work) {
  int fds[2];
  CREMA_REQUIRE(pipe(fds) == 0, what << ": cannot start a reader process: " << strerror(errno));
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    CREMA_FAIL(what << ": cannot start a reader process: " << strerror(error));
  }
  if (child == 0) {
    close(fds[0]);
    RunChild(fds[1], cpu_seconds, work);
  }
  close(fds[1]);
  // Read until the child closes its end, then reap it: reading first keeps a
  // child with a large result from blocking on a full pipe.
  const std::string message = ReadAll(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  CREMA_REQUIRE(clean_exit && !message.empty(), what << ": " << HowItDied(status, cpu_seconds));
  if (message[0] == kError) throw Error(message.substr(1));
  CREMA_REQUIRE(message[0] == kResult, what << ": " << HowItDied(status, cpu_seconds));
  return message.substr(1);
}

}  // namespace crema
