#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX global

namespace unetback::hostile {
namespace {

/// argv/envp arrays built before fork (the child may only exec).
struct exec_args {
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::vector<char*> argv;
  std::vector<char*> envp;

  exec_args(const std::vector<std::string>& a, const std::vector<std::string>& extra) : args(a) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view kv(*e);
      bool overridden = false;
      for (const auto& x : extra) {
        const auto eq = x.find('=');
        if (kv.substr(0, kv.find('=') + 1) == std::string_view(x).substr(0, eq + 1)) {
          overridden = true;
        }
      }
      if (!overridden) {
        env.emplace_back(kv);
      }
    }
    env.insert(env.end(), extra.begin(), extra.end());
    for (auto& s : args) {
      argv.push_back(s.data());
    }
    argv.push_back(nullptr);
    for (auto& s : env) {
      envp.push_back(s.data());
    }
    envp.push_back(nullptr);
  }
};

[[noreturn]] void exec_child(exec_args& a, int log_fd, int stdout_fd) {
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    ::dup2(devnull, STDIN_FILENO);
  }
  ::dup2(stdout_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  ::setpgid(0, 0);  // our own group: a Ctrl-C of the test does not race our teardown
  ::execvpe(a.argv[0], a.argv.data(), a.envp.data());
  const char msg[] = "exec failed\n";
  (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
  ::_exit(127);
}

int open_log(const std::filesystem::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "open " + log.string());
  }
  return fd;
}

pid_t spawn(exec_args& a, int log_fd, int stdout_fd) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid == 0) {
    exec_child(a, log_fd, stdout_fd);
  }
  return pid;
}

std::optional<int> wait_pid(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return status;
    }
    if (r < 0 && errno != EINTR) {
      return std::nullopt;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int exit_code_of(std::optional<int> status) {
  if (!status || !WIFEXITED(*status)) {
    return -1;
  }
  return WEXITSTATUS(*status);
}

}  // namespace

child_process::child_process(const std::vector<std::string>& argv, const std::filesystem::path& log,
                             const std::vector<std::string>& extra_env) {
  exec_args a(argv, extra_env);
  const int fd = open_log(log);
  try {
    pid_ = spawn(a, fd, fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

child_process::~child_process() {
  if (!status_) {
    terminate(std::chrono::seconds(5));
  }
}

bool child_process::alive() {
  if (status_) {
    return false;
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

std::optional<int> child_process::wait(std::chrono::milliseconds timeout) {
  if (!status_) {
    status_ = wait_pid(pid_, timeout);
  }
  return status_;
}

int child_process::terminate(std::chrono::milliseconds grace) {
  if (status_) {
    return *status_;
  }
  ::kill(pid_, SIGTERM);
  if (wait(grace)) {
    return *status_;
  }
  ::kill(pid_, SIGKILL);
  status_ = wait_pid(pid_, std::chrono::seconds(10));
  return status_.value_or(-1);
}

int run_command(const std::vector<std::string>& argv, const std::filesystem::path& log,
                std::chrono::milliseconds timeout) {
  exec_args a(argv, {});
  const int fd = open_log(log);
  const pid_t pid = spawn(a, fd, fd);
  ::close(fd);
  auto status = wait_pid(pid, timeout);
  if (!status) {
    ::kill(pid, SIGKILL);
    wait_pid(pid, std::chrono::seconds(10));
  }
  return exit_code_of(status);
}

std::optional<std::string> capture_command(const std::vector<std::string>& argv,
                                           const std::filesystem::path& log,
                                           std::chrono::milliseconds timeout) {
  exec_args a(argv, {});
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  const int fd = open_log(log);
  const pid_t pid = spawn(a, fd, pipe_fds[1]);
  ::close(fd);
  ::close(pipe_fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  auto status = wait_pid(pid, std::chrono::seconds(5));
  if (!status) {
    ::kill(pid, SIGKILL);
    wait_pid(pid, std::chrono::seconds(10));
  }
  if (exit_code_of(status) != 0) {
    return std::nullopt;
  }
  return out;
}

}  // namespace unetback::hostile
