// The growth rules of cuda/device_buffers.h that need no device: a grow-only
// buffer keeps its memory while a request fits (fits() says so before any
// call), and the pageable-host stager's chunks grow with the copies instead
// of page-locking their full size for the first small one. And FunctionRef,
// the borrowed callable the graph cache takes its callbacks as.
#include <gtest/gtest.h>

#include <string>

#include "common/function_ref.h"
#include "cuda/device_buffers.h"

namespace {

using tte::HostDeviceStager;

TEST(GrowOnlyBuffer, KeepsItsMemoryWhileARequestFits) {
  tte::AlignedHostBuffer buffer;
  EXPECT_FALSE(buffer.fits(0)) << "nothing yet";
  ASSERT_EQ(buffer.reserve(100), cudaSuccess);
  const void* first = buffer.data();
  EXPECT_TRUE(buffer.fits(100));
  EXPECT_TRUE(buffer.fits(1));
  EXPECT_FALSE(buffer.fits(101));
  EXPECT_FALSE(buffer.fits(100, /*device=*/3)) << "another device's memory is other memory";
  ASSERT_EQ(buffer.reserve(64), cudaSuccess);
  EXPECT_EQ(buffer.data(), first) << "a smaller request keeps the buffer";
  ASSERT_EQ(buffer.reserve(4096), cudaSuccess);
  EXPECT_GE(buffer.capacity(), 4096u);
  EXPECT_TRUE(buffer.fits(4096));
}

TEST(HostDeviceStager, ChunksGrowWithTheCopies) {
  EXPECT_EQ(HostDeviceStager::chunk_bytes_for(0), HostDeviceStager::kMinChunkBytes);
  EXPECT_EQ(HostDeviceStager::chunk_bytes_for(32), HostDeviceStager::kMinChunkBytes)
      << "a small tensor's copy page-locks 64 KiB, not 4 MiB";
  EXPECT_EQ(HostDeviceStager::chunk_bytes_for(HostDeviceStager::kMinChunkBytes + 1),
            2 * HostDeviceStager::kMinChunkBytes);
  EXPECT_EQ(HostDeviceStager::chunk_bytes_for(size_t{3} << 20), size_t{4} << 20);
  EXPECT_EQ(HostDeviceStager::chunk_bytes_for(size_t{1} << 30), HostDeviceStager::kChunkBytes)
      << "a large copy goes through 4 MiB chunks in turn";
}

int twice(tte::FunctionRef<int(int)> f, int x) { return f(f(x)); }

TEST(FunctionRef, CallsTheCallableItBorrows) {
  int calls = 0;
  const std::string suffix = "!";
  auto add = [&calls, &suffix](int x) {
    ++calls;
    return x + static_cast<int>(suffix.size());
  };
  EXPECT_EQ(twice(add, 1), 3);
  EXPECT_EQ(calls, 2) << "the same object, not a copy";
  EXPECT_EQ(twice([](int x) { return x * 3; }, 2), 18) << "a temporary lives through the call";
}

}  // namespace
