// Transactions: snapshot isolation, EAGAIN on conflict, transact() retries.

#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

#include "sim_fixture.hpp"

namespace unetback::xs::testing {
namespace {

using XsTransaction = sim_xenstore_test;

TEST_F(XsTransaction, CommitAppliesAllWritesAtOnce) {
  client xs = dom0();
  client other = dom0();
  transaction tx(xs.native_handle());
  tx.write("/tx/a", "1");
  tx.write("/tx/b", "2");
  EXPECT_EQ(tx.read("/tx/a"), "1");
  EXPECT_EQ(other.read("/tx/a"), std::nullopt);  // not visible before commit
  ASSERT_TRUE(tx.commit());
  EXPECT_EQ(other.read("/tx/a"), "1");
  EXPECT_EQ(other.read("/tx/b"), "2");
}

TEST_F(XsTransaction, ConflictingCommitFailsWithEagain) {
  client xs = dom0();
  client other = dom0();
  xs.write("/c/state", "1");
  transaction tx(xs.native_handle());
  EXPECT_EQ(tx.read("/c/state"), "1");
  tx.write("/c/other", "x");
  other.write("/c/state", "2");  // someone else changes what tx read
  EXPECT_FALSE(tx.commit());
  EXPECT_EQ(xs.read("/c/other"), std::nullopt);
  EXPECT_EQ(xs.read("/c/state"), "2");
}

TEST_F(XsTransaction, UnrelatedWritesDoNotConflict) {
  client xs = dom0();
  client other = dom0();
  xs.write("/u/a", "1");
  xs.write("/v/b", "1");
  transaction tx(xs.native_handle());
  tx.write("/u/a", "2");
  other.write("/v/b", "2");
  EXPECT_TRUE(tx.commit());
  EXPECT_EQ(xs.read("/u/a"), "2");
}

TEST_F(XsTransaction, AbortDiscardsTheWrites) {
  client xs = dom0();
  {
    transaction tx(xs.native_handle());
    tx.write("/ab/x", "1");
  }  // destructor aborts
  EXPECT_EQ(xs.read("/ab/x"), std::nullopt);
}

TEST_F(XsTransaction, TransactRedoesTheBodyAfterAConflict) {
  client xs = dom0();
  client other = dom0();
  xs.write("/counter", "0");
  int attempts = 0;
  const std::string result = xs.transact([&](transaction& tx) {
    ++attempts;
    const int value = std::stoi(tx.read("/counter").value());
    if (attempts == 1) {
      other.write("/counter", "10");  // lose the first race
    }
    tx.write("/counter", std::to_string(value + 1));
    return std::to_string(value + 1);
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(result, "11");
  EXPECT_EQ(xs.read("/counter"), "11");
}

TEST_F(XsTransaction, TransactGivesUpAfterBoundedAttempts) {
  client xs = dom0();
  client other = dom0();
  xs.write("/hot", "0");
  int attempts = 0;
  try {
    xs.transact(
        [&](transaction& tx) {
          ++attempts;
          (void)tx.read("/hot");
          other.write("/hot", std::to_string(attempts));
          tx.write("/hot-copy", "x");
        },
        3);
    FAIL() << "expected EAGAIN";
  } catch (const xs::error& e) {
    EXPECT_EQ(e.code().value(), EAGAIN);
  }
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(xs.read("/hot-copy"), std::nullopt);
}

TEST_F(XsTransaction, ExceptionInBodyAbortsAndPropagates) {
  client xs = dom0();
  EXPECT_THROW(xs.transact([](transaction& tx) {
    tx.write("/boom", "1");
    throw std::runtime_error("body failed");
  }),
               std::runtime_error);
  EXPECT_EQ(xs.read("/boom"), std::nullopt);
}

TEST_F(XsTransaction, RemovalInsideATransactionIsAppliedAtCommit) {
  client xs = dom0();
  xs.write("/rmtx/a/b", "1");
  xs.transact([](transaction& tx) { tx.rm("/rmtx/a"); });
  EXPECT_EQ(xs.read("/rmtx/a/b"), std::nullopt);
  EXPECT_EQ(xs.read("/rmtx/a"), std::nullopt);
  EXPECT_TRUE(xs.directory("/rmtx").empty());
}

}  // namespace
}  // namespace unetback::xs::testing
