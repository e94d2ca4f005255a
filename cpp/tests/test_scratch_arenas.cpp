// Scratch memory shared by delegates (backend/scratch_arenas.h): one arena
// per (device, stream), grown and never shrunk, busy while borrowed, freed
// when idle beyond the bound or when the last delegate goes; and the pool of
// streams a call borrows. Host arenas (device -1) need no GPU; the stream
// pool is checked against what the machine has.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backend/scratch_arenas.h"
#include "common/call_context.h"
#include "cuda/cuda_device.h"

namespace {

using tte::ScratchArenas;

void* stream_number(uintptr_t n) { return reinterpret_cast<void*>(n); }

// Each test runs in a process of its own (ctest), so the registry starts
// empty; a user keeps idle arenas from being freed at once.
class ScratchArenasTest : public ::testing::Test {
 protected:
  void SetUp() override { arenas.add_user(); }
  void TearDown() override { arenas.remove_user(); }
  ScratchArenas& arenas = ScratchArenas::instance();
};

TEST_F(ScratchArenasTest, OneArenaPerStreamGrownInWholeBlocks) {
  ScratchArenas::Arena* first = arenas.borrow(-1, nullptr);
  ScratchArenas::Arena* again = arenas.borrow(-1, nullptr);
  EXPECT_EQ(first, again);
  ScratchArenas::Arena* other = arenas.borrow(-1, stream_number(0x10));
  EXPECT_NE(first, other);
  EXPECT_EQ(arenas.arena_count(), 2u);
  {
    std::lock_guard<std::mutex> lock(first->mutex);
    ASSERT_TRUE(arenas.reserve(first, 1000).ok());
    EXPECT_EQ(first->bytes, 1024);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first->memory) % 256, 0u);
    const uint64_t generation = first->generation;
    EXPECT_NE(generation, 0u);
    // Enough already: same memory, same generation.
    ASSERT_TRUE(arenas.reserve(first, 512).ok());
    EXPECT_EQ(first->generation, generation);
    // Grown: a new block, freed before the new one, so the peak is the new size.
    arenas.reset_peak();
    ASSERT_TRUE(arenas.reserve(first, 5000).ok());
    EXPECT_EQ(first->bytes, 5120);
    EXPECT_NE(first->generation, generation);
  }
  EXPECT_EQ(arenas.total_bytes(), 5120);
  EXPECT_EQ(arenas.peak_bytes(), 5120);
  arenas.give_back(first);
  arenas.give_back(again);
  arenas.give_back(other);
}

TEST_F(ScratchArenasTest, TheLastDelegateTakesTheIdleArenasWithIt) {
  ScratchArenas::Arena* arena = arenas.borrow(-1, nullptr);
  ASSERT_TRUE(arenas.reserve(arena, 4096).ok());
  arenas.give_back(arena);
  EXPECT_EQ(arenas.arena_count(), 1u);
  arenas.add_user();
  arenas.remove_user();
  EXPECT_EQ(arenas.arena_count(), 1u) << "another delegate is still there";
  arenas.remove_user();
  EXPECT_EQ(arenas.arena_count(), 0u);
  EXPECT_EQ(arenas.total_bytes(), 0);
  arenas.add_user();  // for TearDown
}

TEST_F(ScratchArenasTest, ABusyArenaIsNeverFreed) {
  ScratchArenas::Arena* busy = arenas.borrow(-1, nullptr);
  ASSERT_TRUE(arenas.reserve(busy, 256).ok());
  arenas.remove_user();
  EXPECT_EQ(arenas.arena_count(), 1u);
  EXPECT_EQ(arenas.total_bytes(), 256);
  arenas.add_user();
  arenas.give_back(busy);
}

TEST_F(ScratchArenasTest, IdleArenasBeyondTheBoundGoLeastRecentlyUsedFirst) {
  const size_t bound = ScratchArenas::kMaxArenas;
  for (uintptr_t s = 1; s <= bound; ++s) {
    ScratchArenas::Arena* arena = arenas.borrow(-1, stream_number(s));
    ASSERT_TRUE(arenas.reserve(arena, 256).ok());
    arenas.give_back(arena);
  }
  EXPECT_EQ(arenas.arena_count(), bound);
  // Stream 1 used again: stream 2 is now the least recently used.
  arenas.give_back(arenas.borrow(-1, stream_number(1)));
  arenas.give_back(arenas.borrow(-1, stream_number(bound + 1)));
  EXPECT_EQ(arenas.arena_count(), bound);
  EXPECT_EQ(arenas.total_bytes(), static_cast<int64_t>(256 * (bound - 1)))
      << "the new arena has no memory yet, one old one was freed";
  // Stream 2's arena was the one freed: borrowing it makes a fresh one.
  ScratchArenas::Arena* second = arenas.borrow(-1, stream_number(2));
  EXPECT_EQ(second->bytes, 0);
  arenas.give_back(second);
}

TEST_F(ScratchArenasTest, ACallBorrowsOneStreamPerDeviceAndGivesItBack) {
  if (tte::cuda_device_count() == 0) {
    tte::CallContext call;
    void* stream = stream_number(1);
    const tte::Status status = tte::call_stream(call, 0, &stream);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("creating a CUDA stream for the call"), std::string::npos)
        << status.message();
    EXPECT_EQ(call.streams.find(0), nullptr) << "nothing borrowed, nothing to give back";
    EXPECT_EQ(arenas.idle_stream_count(), 0u);
    return;
  }
  void* first = nullptr;
  {
    tte::CallContext call;
    ASSERT_TRUE(tte::call_stream(call, 0, &first).ok());
    void* again = nullptr;
    ASSERT_TRUE(tte::call_stream(call, 0, &again).ok());
    EXPECT_EQ(first, again);
    EXPECT_EQ(arenas.idle_stream_count(), 0u);
  }
  EXPECT_EQ(arenas.idle_stream_count(), 1u);
  {
    // The next call takes the same stream; a concurrent one gets its own.
    tte::CallContext next;
    tte::CallContext concurrent;
    void* next_stream = nullptr;
    void* concurrent_stream = nullptr;
    ASSERT_TRUE(tte::call_stream(next, 0, &next_stream).ok());
    ASSERT_TRUE(tte::call_stream(concurrent, 0, &concurrent_stream).ok());
    EXPECT_EQ(next_stream, first);
    EXPECT_NE(concurrent_stream, first);
  }
  EXPECT_EQ(arenas.idle_stream_count(), 2u);
  arenas.remove_user();
  EXPECT_EQ(arenas.idle_stream_count(), 0u) << "destroyed with the last delegate";
  arenas.add_user();
}

}  // namespace
