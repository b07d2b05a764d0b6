#pragma once
// unetbackd's control socket: accepts unetbackctl connections on a unix stream
// socket and dispatches each request line to a registered command handler, on
// the io_context's thread (so handlers may touch control-plane state freely).

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace unetback::ctl {

class control_server {
 public:
  /// Returns the command's result; throws std::exception for an error reply
  /// (its what() is sent back).
  using handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  /// Binds `path` (a stale socket file is replaced), mode 0600. Throws
  /// std::system_error if it cannot.
  control_server(boost::asio::io_context& io, std::string path);
  ~control_server();  // closes and unlinks the socket
  control_server(const control_server&) = delete;
  control_server& operator=(const control_server&) = delete;

  /// Registers `name`; a later registration replaces an earlier one.
  void add_command(std::string name, handler h);
  [[nodiscard]] const std::string& path() const { return path_; }

  struct impl;  ///< implementation detail (public so sessions can hold it)

 private:
  std::string path_;
  std::shared_ptr<impl> impl_;
};

}  // namespace unetback::ctl
