// One call's state (common/call_context.h): the stream a call begins with,
// the streams it borrowed, the memory lent to it read-only, the reason
// behind a failure inside ExecuTorch, and the one thread-local slot that
// carries a call across ExecuTorch's interfaces.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/call_context.h"

namespace {

using tte::CallContext;
using tte::CallInProgress;

void* stream_number(uintptr_t n) { return reinterpret_cast<void*>(n); }

class ThreadStreamSetting : public ::testing::Test {
 protected:
  void TearDown() override { tte::clear_thread_stream_setting(); }
};

TEST_F(ThreadStreamSetting, ACallBeginsWithTheThreadsStream) {
  {
    CallContext call;
    EXPECT_FALSE(call.has_stream());
    EXPECT_EQ(call.stream(), nullptr);
  }
  tte::set_thread_stream_setting(stream_number(0x40));
  CallContext call;
  EXPECT_TRUE(call.has_stream());
  EXPECT_EQ(call.stream(), stream_number(0x40));
  // Read when the call begins: a later setting is the next call's.
  tte::set_thread_stream_setting(stream_number(0x80));
  EXPECT_EQ(call.stream(), stream_number(0x40));
}

TEST_F(ThreadStreamSetting, TheLegacyDefaultStreamIsAChoiceToo) {
  tte::set_thread_stream_setting(nullptr);
  void* seen = stream_number(1);
  EXPECT_TRUE(tte::thread_stream_setting(&seen));
  EXPECT_EQ(seen, nullptr);
  CallContext call;
  EXPECT_TRUE(call.has_stream());
  tte::clear_thread_stream_setting();
  EXPECT_FALSE(tte::thread_stream_setting(&seen));
}

TEST_F(ThreadStreamSetting, ACallsOwnStreamWinsAndOtherThreadsDoNotSeeIt) {
  tte::set_thread_stream_setting(stream_number(0x40));
  CallContext call;
  call.use_stream(stream_number(0x100));
  EXPECT_EQ(call.stream(), stream_number(0x100));
  bool other_thread_has_one = true;
  std::thread other([&] {
    CallContext there;
    other_thread_has_one = there.has_stream();
  });
  other.join();
  EXPECT_FALSE(other_thread_has_one);
}

std::vector<std::pair<int, void*>> g_given_back;

void record_give_back(int device, void* stream) { g_given_back.emplace_back(device, stream); }

TEST(BorrowedStreams, EachIsGivenBackWhenTheCallEnds) {
  g_given_back.clear();
  {
    CallContext call;
    EXPECT_EQ(call.streams.find(0), nullptr);
    call.streams.keep(0, stream_number(0x10), &record_give_back);
    call.streams.keep(1, stream_number(0x20), &record_give_back);
    EXPECT_EQ(call.streams.find(0), stream_number(0x10));
    EXPECT_EQ(call.streams.find(1), stream_number(0x20));
    EXPECT_EQ(call.streams.find(2), nullptr);
    EXPECT_TRUE(g_given_back.empty());
  }
  const std::vector<std::pair<int, void*>> expected = {{0, stream_number(0x10)},
                                                       {1, stream_number(0x20)}};
  EXPECT_EQ(g_given_back, expected);
}

TEST(ReadOnlyLoans, AnOverlapFindsTheLabel) {
  std::vector<char> memory(64);
  tte::ReadOnlyLoans loans;
  EXPECT_TRUE(loans.empty());
  loans.add(memory.data() + 16, 16, "input 0 of 'forward'");
  loans.add(nullptr, 8, "nothing");
  loans.add(memory.data(), 0, "nothing either");
  EXPECT_FALSE(loans.empty());
  ASSERT_NE(loans.label_of(memory.data() + 31, 4), nullptr);
  EXPECT_EQ(*loans.label_of(memory.data() + 31, 4), "input 0 of 'forward'");
  EXPECT_NE(loans.label_of(memory.data() + 8, 9), nullptr);
  // Touching is not overlapping.
  EXPECT_EQ(loans.label_of(memory.data(), 16), nullptr);
  EXPECT_EQ(loans.label_of(memory.data() + 32, 16), nullptr);
  EXPECT_EQ(loans.label_of(memory.data() + 20, 0), nullptr);
}

TEST(ExecuTorchFailure, KeepsTheFirstFewLinesOnceEachWhileOpen) {
  tte::ExecuTorchFailure failure;
  EXPECT_FALSE(failure.note_line("closed", 6));
  failure.open();
  const std::string line = "Missing operator\n";
  EXPECT_TRUE(failure.note_line(line.data(), line.size()));
  EXPECT_TRUE(failure.note_line(line.data(), line.size()));
  const std::string long_line(300, 'x');
  EXPECT_TRUE(failure.note_line(long_line.data(), long_line.size()));
  for (int i = 0; i < 5; ++i) {
    const std::string more = "line " + std::to_string(i);
    failure.note_line(more.data(), more.size());
  }
  ASSERT_EQ(failure.log_lines().size(), 4u);
  EXPECT_EQ(failure.log_lines()[0], "Missing operator");
  EXPECT_EQ(failure.log_lines()[1], std::string(240, 'x') + "...");
  EXPECT_EQ(failure.log_lines()[3], "line 1");
  failure.close();
  // Opened again: a new call into ExecuTorch starts clean.
  failure.keep(tte::Status(TTE_ERROR_RUNTIME, "old"));
  failure.open();
  EXPECT_TRUE(failure.log_lines().empty());
  EXPECT_TRUE(failure.reported().ok());
}

TEST(ReportToExecuTorch, KeptOnlyByAnOpenCall) {
  CallContext call;
  const tte::Status failure(TTE_ERROR_NO_DEVICE, "no CUDA device");
  // No call into ExecuTorch is open: logged, not kept.
  EXPECT_EQ(tte::report_to_executorch(&call, failure), executorch::runtime::Error::NotSupported);
  EXPECT_TRUE(call.failure.reported().ok());
  EXPECT_EQ(tte::report_to_executorch(nullptr, failure), executorch::runtime::Error::NotSupported);
  call.failure.open();
  tte::report_to_executorch(&call, failure);
  EXPECT_EQ(call.failure.reported().message(), "no CUDA device");
  EXPECT_EQ(tte::report_to_executorch(&call, tte::Status::Ok()), executorch::runtime::Error::Ok);
  EXPECT_EQ(call.failure.reported().message(), "no CUDA device");
}

TEST(CallInProgress, OneSlotPerThreadRestoredOnTheWayOut) {
  EXPECT_EQ(CallInProgress::current(), nullptr);
  CallContext outer;
  CallContext inner;
  {
    CallInProgress first(outer);
    EXPECT_EQ(CallInProgress::current(), &outer);
    {
      CallInProgress second(inner);
      EXPECT_EQ(CallInProgress::current(), &inner);
      CallContext* seen_elsewhere = &outer;
      std::thread other([&] { seen_elsewhere = CallInProgress::current(); });
      other.join();
      EXPECT_EQ(seen_elsewhere, nullptr);
    }
    EXPECT_EQ(CallInProgress::current(), &outer);
  }
  EXPECT_EQ(CallInProgress::current(), nullptr);
}

}  // namespace
