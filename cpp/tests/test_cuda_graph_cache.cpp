// The CUDA-graph cache's order of work, with the CUDA calls replaced by ones
// that write down what was called (so it runs without a GPU), and which
// memory a device engine may address as it is. On a GPU the same paths run
// for real in test_backend_gpu.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/runtime_stats.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_graph_cache.h"

namespace tte {
namespace {

std::vector<std::string>* g_calls = nullptr;
bool g_fail_end_capture = false;
bool g_fail_allocate = false;
int g_buffers_live = 0;
uintptr_t g_next_buffer = 0x100000;

void record(const std::string& call) { g_calls->push_back(call); }

cudaError_t fake_synchronize(cudaStream_t) {
  record("synchronize");
  return cudaSuccess;
}
cudaError_t fake_begin(cudaStream_t) {
  record("begin_capture");
  return cudaSuccess;
}
cudaError_t fake_end(cudaStream_t, cudaGraph_t* graph) {
  record("end_capture");
  *graph = reinterpret_cast<cudaGraph_t>(0x1);
  return g_fail_end_capture ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
}
cudaError_t fake_instantiate(cudaGraphExec_t* exec, cudaGraph_t) {
  record("instantiate");
  *exec = reinterpret_cast<cudaGraphExec_t>(0x2);
  return cudaSuccess;
}
cudaError_t fake_launch(cudaGraphExec_t, cudaStream_t) {
  record("launch");
  return cudaSuccess;
}
void fake_destroy_graph(cudaGraph_t) {}
void fake_destroy_exec(cudaGraphExec_t) {}
cudaError_t fake_allocate(void** memory, size_t bytes) {
  if (g_fail_allocate) {
    return cudaErrorMemoryAllocation;
  }
  *memory = reinterpret_cast<void*>(g_next_buffer);
  g_next_buffer += (bytes + 0xfff) & ~size_t{0xfff};
  ++g_buffers_live;
  return cudaSuccess;
}
void fake_free(void*) { --g_buffers_live; }
cudaError_t fake_copy(void* dst, const void* src, size_t bytes, cudaStream_t) {
  const bool in = reinterpret_cast<uintptr_t>(dst) >= 0x100000;
  record(std::string(in ? "copy in " : "copy out ") + std::to_string(bytes));
  (void)src;
  return cudaSuccess;
}

const CudaGraphCalls kFakeCalls{&fake_synchronize, &fake_begin,        &fake_end,
                                &fake_instantiate, &fake_launch,       &fake_destroy_graph,
                                &fake_destroy_exec, &fake_allocate,    &fake_free,
                                &fake_copy};

// Caller addresses are small numbers, owned buffers from 0x100000 up.
void* at(uintptr_t address) { return reinterpret_cast<void*>(address); }

// One input x and one output y of 64 bytes each.
std::vector<GraphArgument> io(uintptr_t x, uintptr_t y, bool may_move = true) {
  return {GraphArgument{at(x), 64, true, may_move}, GraphArgument{at(y), 64, false, may_move}};
}

class GraphCache : public testing::Test {
 protected:
  void SetUp() override {
    g_calls = &calls_;
    g_fail_end_capture = false;
    g_fail_allocate = false;
    g_buffers_live = 0;
  }
  void TearDown() override { g_calls = nullptr; }

  // Runs the shape set `key` with `arguments`; the enqueue writes down the
  // addresses it was given.
  Status run(CudaGraphCache& cache, std::vector<int64_t> key,
             std::vector<GraphArgument> arguments = io(0x10, 0x20), bool capturable = true) {
    return cache.run(
        key, arguments, nullptr,
        [this](const std::vector<void*>& addresses) {
          record("enqueue");
          enqueued_at_ = addresses;
          return Status::Ok();
        },
        [capturable] {
          record("capturable?");
          return capturable;
        });
  }
  int count(const std::string& call) const {
    int n = 0;
    for (const std::string& c : calls_) n += c == call;
    return n;
  }

  std::vector<std::string> calls_;
  std::vector<void*> enqueued_at_;
};

using Calls = std::vector<std::string>;

// trtexec (samples/common/sampleInference.cpp): a plain enqueue and a
// synchronize right before cudaStreamBeginCapture, because the first enqueue
// after a shape or profile change does work a capture cannot hold
// (NvInferRuntime.h:4272). The captured graph is not launched: the plain
// enqueue already did the call's work.
TEST_F(GraphCache, CapturesRightAfterAPlainEnqueueAndSynchronize) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "the first sight of a shape set runs plainly";
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue", "synchronize", "capturable?", "begin_capture", "enqueue",
                           "end_capture", "instantiate"}));
  EXPECT_EQ(cache.num_graphs(), 1u);
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"launch"}));
  EXPECT_EQ(cache.replays(), 1u);
  EXPECT_EQ(cache.copies(), 0u) << "a caller that reuses its buffers needs no copies";
}

// Other shapes in between: the capture of {1, 4} still follows its own
// plain enqueue, never another shape set's.
TEST_F(GraphCache, AnotherSignatureInBetweenDoesNotBreakTheOrder) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  ASSERT_TRUE(run(cache, {2, 4}).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  ASSERT_GE(calls_.size(), 4u);
  EXPECT_EQ(calls_[0], "enqueue");
  EXPECT_EQ(calls_[1], "synchronize");
  EXPECT_EQ(calls_[3], "begin_capture");
}

// A graph is only valid for the shapes it was captured with (NvInferRuntime.h,
// enqueueV3 and graph capture notes): after a shape change the new shape set
// runs plainly, never by launching the other shape set's graph, and a graph
// is never shared between execution contexts.
TEST_F(GraphCache, AShapeOrContextChangeRunsPlainlyFirst) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(cache, {/*context*/ 7, /*profile*/ 0, 1, 4}).ok());
  ASSERT_EQ(count("launch"), 1);
  calls_.clear();
  ASSERT_TRUE(run(cache, {7, 0, 2, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "new input dims";
  calls_.clear();
  ASSERT_TRUE(run(cache, {7, 1, 1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "another profile";
  calls_.clear();
  ASSERT_TRUE(run(cache, {8, 0, 1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "another execution context";
  calls_.clear();
  ASSERT_TRUE(run(cache, {7, 0, 1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"launch"})) << "the first shape set's graph is still good";
}

// "Cannot capture" is decided per shape set: the engine is asked again for
// other shapes (weight streaming, say, may only hold for some), and the
// refusal is counted.
TEST_F(GraphCache, CannotCaptureIsDecidedPerShapeSet) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  RuntimeStats::instance().reset();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(run(cache, {3}, io(0x10, 0x20), /*capturable=*/false).ok());
  EXPECT_EQ(cache.num_graphs(), 0u);
  EXPECT_EQ(count("begin_capture"), 0);
  EXPECT_EQ(count("capturable?"), 1) << "asked once for this shape set";
  EXPECT_EQ(count("enqueue"), 4) << "every call still ran once";
  EXPECT_EQ(RuntimeStats::instance().graph_uncapturable.load(), 1u);
  calls_.clear();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(cache, {4}).ok());
  EXPECT_EQ(count("capturable?"), 1) << "asked again for another shape set";
  EXPECT_EQ(cache.num_graphs(), 1u);
  EXPECT_EQ(count("launch"), 1);
}

// An evicted shape set is forgotten, its refusal too: asked again later.
TEST_F(GraphCache, AnEvictedShapeSetIsAskedAgain) {
  CudaGraphCache cache(2, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {3}, io(0x10, 0x20), false).ok());
  ASSERT_TRUE(run(cache, {4}).ok());
  ASSERT_TRUE(run(cache, {5}).ok());  // evicts {3}
  calls_.clear();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {3}).ok());
  EXPECT_EQ(count("capturable?"), 1);
  EXPECT_EQ(count("instantiate"), 1);
}

// A failed capture leaves that shape set to plain enqueues; others may still
// be captured.
TEST_F(GraphCache, AFailedCaptureFallsBackForThatShapeSetOnly) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  g_fail_end_capture = true;
  ASSERT_TRUE(run(cache, {5}).ok());
  ASSERT_TRUE(run(cache, {5}).ok());
  ASSERT_TRUE(run(cache, {5}).ok());
  EXPECT_EQ(cache.num_graphs(), 0u);
  g_fail_end_capture = false;
  ASSERT_TRUE(run(cache, {6}).ok());
  ASSERT_TRUE(run(cache, {6}).ok());
  EXPECT_EQ(cache.num_graphs(), 1u);
}

// A caller passing a fresh input tensor on every call (new address each
// time) replays one graph captured on the cache's own input buffer: the
// input is copied in before the launch; the output, which stayed where it
// was, is used in place.
TEST_F(GraphCache, FreshInputAddressesReplayOneGraphThroughOwnedBuffers) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  RuntimeStats::instance().reset();
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"copy in 64", "enqueue", "synchronize", "capturable?", "begin_capture",
                           "enqueue", "end_capture", "instantiate"}));
  ASSERT_EQ(enqueued_at_.size(), 2u);
  EXPECT_GE(reinterpret_cast<uintptr_t>(enqueued_at_[0]), 0x100000u) << "the owned buffer";
  EXPECT_EQ(enqueued_at_[1], at(0x20)) << "the output did not move: used where it is";
  EXPECT_EQ(cache.owned_bytes(), 64u);
  for (uintptr_t x = 0x40; x < 0x40 + 100 * 0x10; x += 0x10) {
    calls_.clear();
    ASSERT_TRUE(run(cache, {1}, io(x, 0x20)).ok());
    ASSERT_EQ(calls_, (Calls{"copy in 64", "launch"})) << x;
  }
  EXPECT_EQ(cache.replays(), 100u);
  EXPECT_EQ(cache.num_graphs(), 1u);
  EXPECT_EQ(cache.copies(), 101u);
  EXPECT_EQ(RuntimeStats::instance().graph_io_copies.load(), 101u);
  EXPECT_EQ(RuntimeStats::instance().graph_io_bytes.load(), 101u * 64);
  EXPECT_EQ(RuntimeStats::instance().d2d_copies.load(), 101u);
}

// Fresh outputs too: the output is copied out after the launch. An argument
// that starts moving later joins the owned ones at one new capture.
TEST_F(GraphCache, AnArgumentThatStartsMovingJoinsTheOwnedOnes) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x50, 0x60)).ok());
  EXPECT_EQ(count("instantiate"), 1) << "recaptured with the output owned too";
  EXPECT_EQ(calls_.back(), "copy out 64");
  EXPECT_EQ(cache.owned_bytes(), 128u);
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x70, 0x80)).ok());
  EXPECT_EQ(calls_, (Calls{"copy in 64", "launch", "copy out 64"}));
  EXPECT_EQ(cache.num_graphs(), 1u);
}

// A caller that alternates between fresh tensors and its own reused buffers
// gets both: a copy-free graph on the buffers it reuses, the owned one for
// the rest.
TEST_F(GraphCache, ReusedBuffersKeepACopyFreeGraph) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"launch"}));
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x90, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"copy in 64", "launch"}));
  EXPECT_EQ(cache.num_graphs(), 2u);
}

// In-place (aliased) memory never moves into an owned buffer: when it moves,
// the call runs plainly on the caller's memory.
TEST_F(GraphCache, MemoryThatMayNotMoveRunsPlainly) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  for (uintptr_t x = 0x10; x < 0x60; x += 0x10) {
    ASSERT_TRUE(run(cache, {1}, io(x, x, /*may_move=*/false)).ok());
  }
  EXPECT_EQ(count("enqueue"), 5);
  EXPECT_EQ(count("begin_capture"), 0);
  EXPECT_EQ(cache.copies(), 0u);
  EXPECT_EQ(g_buffers_live, 0);
}

// The owned bytes are bounded: older shape sets give theirs up, and a shape
// set that alone exceeds the bound runs plainly.
TEST_F(GraphCache, OwnedBuffersAreBounded) {
  CudaGraphCache cache(8, /*max_owned_bytes=*/128, kFakeCalls);
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(cache.owned_bytes(), 128u);
  ASSERT_TRUE(run(cache, {2}, io(0x10, 0x20)).ok());
  ASSERT_TRUE(run(cache, {2}, io(0x50, 0x20)).ok());
  EXPECT_EQ(cache.owned_bytes(), 64u) << "{1} gave its buffers up for {2}";
  EXPECT_EQ(g_buffers_live, 1);
  std::vector<GraphArgument> big = {GraphArgument{at(0x10), 256, true, true},
                                    GraphArgument{at(0x20), 64, false, true}};
  ASSERT_TRUE(run(cache, {3}, big).ok());
  big[0].address = at(0x30);
  calls_.clear();
  ASSERT_TRUE(run(cache, {3}, big).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "over the bound: plainly";
  EXPECT_EQ(cache.owned_bytes(), 64u);
}

TEST_F(GraphCache, NoDeviceMemoryForOwnedBuffersRunsPlainly) {
  CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
  g_fail_allocate = true;
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"}));
  EXPECT_EQ(enqueued_at_[0], at(0x30));
  EXPECT_EQ(cache.owned_bytes(), 0u);
}

TEST_F(GraphCache, OwnedBuffersAreFreedWithTheCache) {
  {
    CudaGraphCache cache(8, CudaGraphCache::kDefaultMaxOwnedBytes, kFakeCalls);
    ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
    ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
    EXPECT_EQ(g_buffers_live, 2);
  }
  EXPECT_EQ(g_buffers_live, 0);
}

// Integrated GPUs: pageable host memory only where the device says it can
// read it (cudaDevAttrPageableMemoryAccess; Jetson Orin-class iGPUs say no),
// pinned memory at its mapped address, discrete GPUs neither.
TEST(DeviceAddress, HostMemoryOnIntegratedGpus) {
  int data = 0;
  PointerInfo pageable;  // kUnregistered
  DeviceTraits orin{/*integrated=*/true, /*pageable_memory_access=*/false};
  DeviceTraits coherent{/*integrated=*/true, /*pageable_memory_access=*/true};
  DeviceTraits discrete{/*integrated=*/false, /*pageable_memory_access=*/true};
  EXPECT_EQ(device_address(pageable, &data, 0, orin), nullptr);
  EXPECT_EQ(device_address(pageable, &data, 0, coherent), &data);
  EXPECT_EQ(device_address(pageable, &data, 0, discrete), nullptr) << "discrete GPUs stage";

  int mapped = 0;
  PointerInfo pinned;
  pinned.kind = PointerKind::kHost;
  pinned.device_pointer = &mapped;
  EXPECT_EQ(device_address(pinned, &data, 0, orin), &mapped) << "the mapped address, not the host one";
  EXPECT_EQ(device_address(pinned, &data, 0, discrete), nullptr);
  pinned.device_pointer = nullptr;
  EXPECT_EQ(device_address(pinned, &data, 0, orin), nullptr) << "not mapped: staged";

  PointerInfo device;
  device.kind = PointerKind::kDevice;
  device.device = 1;
  EXPECT_EQ(device_address(device, &data, 1, discrete), &data);
  EXPECT_EQ(device_address(device, &data, 0, discrete), nullptr);
}

TEST(DeviceAddress, TheLegacyDefaultStreamIsRecognised) {
  EXPECT_TRUE(is_legacy_default_stream(nullptr));
  EXPECT_TRUE(is_legacy_default_stream(cudaStreamLegacy));
  EXPECT_FALSE(is_legacy_default_stream(cudaStreamPerThread));
}

}  // namespace
}  // namespace tte
