// The sim-xenstored wire parser as a pure unit: bytes in, request or error out.

#include <gtest/gtest.h>
#include <stdint.h>
#include <xen/io/xs_wire.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "unetback/xs/sim/wire.hpp"

namespace unetback::xs::sim {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

std::vector<std::byte> msg(std::uint32_t type, std::string_view payload, std::uint32_t req_id = 7,
                           std::uint32_t tx_id = 0) {
  return bytes_of(encode_message(type, req_id, tx_id, payload));
}

TEST(XsWire, ReadRequestIsSplitIntoItsPath) {
  const auto in = msg(XS_READ, std::string_view("/local/domain/0\0", 16), 42, 3);
  const parse_result r = parse_message(in);
  ASSERT_EQ(r.status, parse_status::ok);
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.req.hdr.req_id, 42U);
  EXPECT_EQ(r.req.hdr.tx_id, 3U);
  ASSERT_EQ(r.req.args.size(), 1U);
  EXPECT_EQ(r.req.args[0], "/local/domain/0");
}

TEST(XsWire, WriteValueKeepsEveryByteAfterThePath) {
  const std::string payload("/a\0v\0al", 7);
  const parse_result r = parse_message(msg(XS_WRITE, payload));
  ASSERT_EQ(r.status, parse_status::ok);
  EXPECT_EQ(r.req.args.at(0), "/a");
  EXPECT_EQ(r.req.data, std::string("v\0al", 4));
}

TEST(XsWire, PartialMessageWaitsForMoreBytes) {
  auto in = msg(XS_READ, std::string_view("/a\0", 3));
  in.pop_back();
  EXPECT_EQ(parse_message(in).status, parse_status::incomplete);
  EXPECT_EQ(parse_message(std::span(in).first(10)).status, parse_status::incomplete);
}

TEST(XsWire, PayloadLongerThan4096IsFatal) {
  std::vector<std::byte> in = msg(XS_READ, "");
  const std::uint32_t len = 4097;
  std::memcpy(in.data() + 12, &len, sizeof(len));
  EXPECT_EQ(parse_message(in).status, parse_status::fatal);
}

TEST(XsWire, UnknownTypeIsAnsweredWithEinval) {
  const parse_result r = parse_message(msg(99, std::string_view("x\0", 2)));
  ASSERT_EQ(r.status, parse_status::error_reply);
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_EQ(r.consumed, header_size + 2);
}

TEST(XsWire, ClientSendingServerOnlyTypesIsRejected) {
  EXPECT_EQ(parse_message(msg(XS_WATCH_EVENT, std::string_view("a\0b\0", 4))).status,
            parse_status::error_reply);
  EXPECT_EQ(parse_message(msg(XS_ERROR, std::string_view("EINVAL\0", 7))).status,
            parse_status::error_reply);
  EXPECT_EQ(parse_message(msg(20, std::string_view("a\0", 2))).status, parse_status::error_reply);
}

TEST(XsWire, PathWithoutNulTerminatorIsRejected) {
  const parse_result r = parse_message(msg(XS_READ, "/a"));
  EXPECT_EQ(r.status, parse_status::error_reply);
  EXPECT_EQ(r.error, EINVAL);
}

TEST(XsWire, ReadWithTwoStringsIsRejected) {
  EXPECT_EQ(parse_message(msg(XS_READ, std::string_view("/a\0/b\0", 6))).status,
            parse_status::error_reply);
}

TEST(XsWire, WatchWithoutTokenIsRejected) {
  EXPECT_EQ(parse_message(msg(XS_WATCH, std::string_view("/a\0", 3))).status,
            parse_status::error_reply);
  const parse_result ok = parse_message(msg(XS_WATCH, std::string_view("/a\0tok\0", 7)));
  ASSERT_EQ(ok.status, parse_status::ok);
  EXPECT_EQ(ok.req.args.at(1), "tok");
}

TEST(XsWire, TwoMessagesInOneBufferAreParsedOneAtATime) {
  auto in = msg(XS_READ, std::string_view("/a\0", 3));
  const auto second = msg(XS_RM, std::string_view("/b\0", 3));
  in.insert(in.end(), second.begin(), second.end());
  const parse_result first = parse_message(in);
  ASSERT_EQ(first.status, parse_status::ok);
  const parse_result next = parse_message(std::span(in).subspan(first.consumed));
  ASSERT_EQ(next.status, parse_status::ok);
  EXPECT_EQ(next.req.hdr.type, static_cast<std::uint32_t>(XS_RM));
}

TEST(XsWire, ErrorReplyCarriesErrnoNameAndEchoesIds) {
  msg_header hdr{XS_READ, 9, 4, 0};
  const std::string out = encode_error(hdr, EACCES);
  // A client may not send ERROR, but the header still decodes.
  const parse_result r = parse_message(bytes_of(out));
  EXPECT_EQ(r.req.hdr.type, static_cast<std::uint32_t>(XS_ERROR));
  EXPECT_EQ(r.req.hdr.req_id, 9U);
  EXPECT_EQ(r.req.hdr.tx_id, 4U);
  EXPECT_EQ(out.substr(header_size), std::string("EACCES\0", 7));
  EXPECT_EQ(errno_name(12345), "EIO");
}

TEST(XsWire, WatchEventHasZeroIdsAndTwoStrings) {
  const std::string ev = encode_watch_event("/a/b", "tok");
  std::uint32_t words[4];
  std::memcpy(words, ev.data(), sizeof(words));
  EXPECT_EQ(words[0], static_cast<std::uint32_t>(XS_WATCH_EVENT));
  EXPECT_EQ(words[1], 0U);
  EXPECT_EQ(words[2], 0U);
  EXPECT_EQ(ev.substr(header_size), std::string("/a/b\0tok\0", 9));
}

}  // namespace
}  // namespace unetback::xs::sim
