// xs-control COMMAND [ARG...]: one XS_CONTROL request (xs_control_command),
// arguments NUL-separated like xenstore-control sends them; prints the reply.
// Exit 0 on success, 1 if the request failed, 2 on usage errors.

#include "unetback/xs/xenstore_c.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: xs-control COMMAND [ARG...]\n");
    return 2;
  }
  std::string data;
  for (int i = 2; i < argc; ++i) {
    data += argv[i];
    data.push_back('\0');
  }
  xs_handle* h = xs_open(0);
  if (h == nullptr) {
    std::fprintf(stderr, "xs-control: cannot connect to xenstored: %s\n", std::strerror(errno));
    return 1;
  }
  char* reply = xs_control_command(h, argv[1], data.data(), static_cast<unsigned>(data.size()));
  const int err = errno;
  xs_close(h);
  if (reply == nullptr) {
    std::fprintf(stderr, "xs-control: %s: %s\n", argv[1], std::strerror(err));
    return 1;
  }
  std::fputs(reply, stdout);
  std::free(reply);
  return 0;
}
