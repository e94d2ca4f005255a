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
bool g_refuse_update = false;
bool g_fail_instantiate = false;
int g_execs_live = 0;
// Whether destroying a captured graph is written down (only where a test
// looks at when it happens).
bool g_record_destroy_graph = false;
uintptr_t g_next_exec = 0x2;

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
  if (g_fail_instantiate) {
    return cudaErrorInvalidValue;
  }
  *exec = reinterpret_cast<cudaGraphExec_t>(g_next_exec++);
  ++g_execs_live;
  return cudaSuccess;
}
cudaError_t fake_launch(cudaGraphExec_t, cudaStream_t) {
  record("launch");
  return cudaSuccess;
}
void fake_destroy_graph(cudaGraph_t) {
  if (g_record_destroy_graph) record("destroy_graph");
}
void fake_destroy_exec(cudaGraphExec_t) { --g_execs_live; }
cudaError_t fake_update(cudaGraphExec_t, cudaGraph_t) {
  record("update");
  return g_refuse_update ? cudaErrorGraphExecUpdateFailure : cudaSuccess;
}

const CudaGraphCalls kFakeCalls{&fake_synchronize,  &fake_begin,  &fake_end,
                                &fake_instantiate,  &fake_launch, &fake_destroy_graph,
                                &fake_destroy_exec, &fake_update};

void* at(uintptr_t address) { return reinterpret_cast<void*>(address); }

// One input x and one output y.
std::vector<void*> io(uintptr_t x, uintptr_t y) { return {at(x), at(y)}; }

class GraphCache : public testing::Test {
 protected:
  void SetUp() override {
    g_calls = &calls_;
    g_fail_end_capture = false;
    g_refuse_update = false;
    g_fail_instantiate = false;
    g_execs_live = 0;
    g_record_destroy_graph = false;
  }
  void TearDown() override { g_calls = nullptr; }

  // Runs the shape set `key` with `arguments`; the enqueue writes down the
  // addresses it was given.
  Status run(CudaGraphCache& cache, std::vector<int64_t> key,
             std::vector<void*> addresses = io(0x10, 0x20), bool capturable = true) {
    return cache.run(
        key, addresses, nullptr,
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
  CudaGraphCache cache(8, kFakeCalls);
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
  EXPECT_EQ(cache.updates(), 0u) << "a caller that reuses its buffers needs no update";
}

// Other shapes in between: the capture of {1, 4} still follows its own
// plain enqueue, never another shape set's.
TEST_F(GraphCache, AnotherSignatureInBetweenDoesNotBreakTheOrder) {
  CudaGraphCache cache(8, kFakeCalls);
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
  CudaGraphCache cache(8, kFakeCalls);
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
  CudaGraphCache cache(8, kFakeCalls);
  RuntimeStats::instance().reset();
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(run(cache, {3}, io(0x10, 0x20), /*capturable=*/false).ok());
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
  CudaGraphCache cache(2, kFakeCalls);
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
  CudaGraphCache cache(8, kFakeCalls);
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

// A caller passing fresh tensors on every call (new addresses each time)
// replays one graph: the enqueue is captured again at the new addresses
// (nothing runs), the executable graph is updated in place, then launched.
// No copies, no instantiate, no synchronize after the first capture.
TEST_F(GraphCache, FreshAddressesUpdateTheGraphInPlace) {
  CudaGraphCache cache(8, kFakeCalls);
  RuntimeStats::instance().reset();
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue", "synchronize", "capturable?", "begin_capture", "enqueue",
                           "end_capture", "instantiate"}))
      << "the second call is the shape set's warm-up and first capture, wherever its tensors are";
  for (uintptr_t x = 0x100; x < 0x100 + 100 * 0x20; x += 0x20) {
    calls_.clear();
    ASSERT_TRUE(run(cache, {1}, io(x, x + 0x10)).ok());
    ASSERT_EQ(calls_,
              (Calls{"capturable?", "begin_capture", "enqueue", "end_capture", "update", "launch"}))
        << x;
    ASSERT_EQ(enqueued_at_, io(x, x + 0x10)) << "captured at the call's own addresses";
  }
  EXPECT_EQ(cache.replays(), 100u);
  EXPECT_EQ(cache.updates(), 100u);
  EXPECT_EQ(cache.num_graphs(), 1u);
  EXPECT_EQ(g_execs_live, 1);
  EXPECT_EQ(RuntimeStats::instance().graph_updates.load(), 100u);
  EXPECT_EQ(RuntimeStats::instance().graph_captures.load(), 1u);
  EXPECT_EQ(RuntimeStats::instance().d2d_copies.load(), 0u);
  EXPECT_EQ(RuntimeStats::instance().enqueues.load(), 2u) << "only the warm-up ran plainly";
}

// Back on addresses the graph was last updated to: a plain replay again.
TEST_F(GraphCache, TheLastAddressesReplayWithoutAnUpdate) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"launch"}));
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  EXPECT_EQ(count("update"), 1) << "0x10 was the graph's before the update: updated back";
}

// The capture an update came from is destroyed after the launch, while the
// device runs it: the call waits for the device next, so the host work of
// the destroy is not added to the call's time.
TEST_F(GraphCache, TheCaptureBehindAnUpdateIsDestroyedAfterTheLaunch) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  g_record_destroy_graph = true;
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_, (Calls{"capturable?", "begin_capture", "enqueue", "end_capture", "update",
                           "launch", "destroy_graph"}));
}

// What the last call launched can be launched again as it is (a run that
// repeats the last one, program/repeated_run.h); a call that launched
// nothing leaves nothing to launch.
TEST_F(GraphCache, LaunchAgainRelaunchesOnlyWhatTheLastCallLaunched) {
  CudaGraphCache cache(8, kFakeCalls);
  ASSERT_TRUE(run(cache, {1}).ok());
  EXPECT_FALSE(cache.last_call_launched()) << "a plain first run";
  ASSERT_TRUE(run(cache, {1}).ok());
  EXPECT_FALSE(cache.last_call_launched()) << "captured, not launched";
  calls_.clear();
  EXPECT_EQ(cache.launch_again().code(), TTE_ERROR_INVALID_STATE);
  EXPECT_TRUE(calls_.empty());
  ASSERT_TRUE(run(cache, {1}).ok());
  ASSERT_TRUE(cache.last_call_launched());
  calls_.clear();
  ASSERT_TRUE(cache.launch_again().ok());
  ASSERT_TRUE(cache.launch_again().ok());
  EXPECT_EQ(calls_, (Calls{"launch", "launch"})) << "nothing captured, updated or enqueued";
  EXPECT_EQ(cache.replays(), 3u);
  // Moved addresses: updated, launched, and that launch is the one repeated.
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_TRUE(cache.last_call_launched());
  // Another shape set runs plainly: nothing to launch again.
  ASSERT_TRUE(run(cache, {2}).ok());
  EXPECT_FALSE(cache.last_call_launched());
  calls_.clear();
  EXPECT_FALSE(cache.launch_again().ok());
  EXPECT_TRUE(calls_.empty());
}

// An update the runtime refuses (the capture's work differs, not only its
// parameters) instantiates the new capture in place of the old graph.
TEST_F(GraphCache, ARefusedUpdateInstantiatesTheNewCapture) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  g_refuse_update = true;
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_, (Calls{"capturable?", "begin_capture", "enqueue", "end_capture", "update",
                           "instantiate", "launch"}));
  EXPECT_EQ(g_execs_live, 1) << "the old graph was destroyed";
  EXPECT_EQ(cache.updates(), 0u);
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_, (Calls{"launch"}));
}

// No graph for the new addresses at all: the call still runs, plainly, and
// the shape set runs plainly from then on.
TEST_F(GraphCache, AFailedRecaptureRunsTheCallPlainly) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  g_fail_end_capture = true;
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_, (Calls{"capturable?", "begin_capture", "enqueue", "end_capture", "enqueue"}));
  EXPECT_EQ(enqueued_at_, io(0x30, 0x40));
  EXPECT_EQ(cache.num_graphs(), 0u);
  EXPECT_EQ(g_execs_live, 0);
  g_fail_end_capture = false;
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"}));
}

TEST_F(GraphCache, AFailedInstantiateAfterARefusedUpdateRunsPlainly) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  g_refuse_update = true;
  g_fail_instantiate = true;
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40)).ok());
  EXPECT_EQ(calls_.back(), "enqueue");
  EXPECT_EQ(enqueued_at_, io(0x30, 0x40));
  EXPECT_EQ(g_execs_live, 0);
}

// The engine is asked before every capture, re-captures included, and a no
// leaves the shape set to plain enqueues.
TEST_F(GraphCache, AnEngineThatStopsBeingCapturableRunsPlainly) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10, 0x20)).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1}, io(0x30, 0x40), /*capturable=*/false).ok());
  EXPECT_EQ(calls_, (Calls{"capturable?", "enqueue"}));
  EXPECT_EQ(g_execs_live, 0);
}

TEST_F(GraphCache, GraphsAreDestroyedWithTheCache) {
  {
    CudaGraphCache cache(8, kFakeCalls);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(cache, {1}, io(0x10 + 0x20 * i, 0x20)).ok());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(cache, {2}).ok());
    EXPECT_EQ(g_execs_live, 2);
  }
  EXPECT_EQ(g_execs_live, 0);
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
  EXPECT_EQ(device_address(pinned, &data, 0, orin), &mapped)
      << "the mapped address, not the host one";
  EXPECT_EQ(device_address(pinned, &data, 0, discrete), nullptr);
  pinned.device_pointer = nullptr;
  EXPECT_EQ(device_address(pinned, &data, 0, orin), nullptr) << "not mapped: staged";

  PointerInfo device;
  device.kind = PointerKind::kDevice;
  device.device = 1;
  EXPECT_EQ(device_address(device, &data, 1, discrete), &data);
  EXPECT_EQ(device_address(device, &data, 0, discrete), nullptr);
}

// Why no device is usable, in words: a CUDA 13 build on JetPack 6's driver
// (CUDA 12.6) must say the driver is too old, not only "no CUDA device".
TEST(CudaUnavailable, SaysWhichPartIsMissing) {
  const std::string old_driver =
      describe_cuda_unavailable(cudaErrorInsufficientDriver, 12060, 13000);
  EXPECT_NE(old_driver.find("driver is too old"), std::string::npos) << old_driver;
  EXPECT_NE(old_driver.find("CUDA 12.6"), std::string::npos) << old_driver;
  EXPECT_NE(old_driver.find("CUDA 13.0"), std::string::npos) << old_driver;
  EXPECT_NE(old_driver.find("libcudart.so.13"), std::string::npos) << old_driver;
  EXPECT_NE(
      describe_cuda_unavailable(cudaErrorInsufficientDriver, 0, 13000).find("no NVIDIA driver"),
      std::string::npos)
      << "the runtime says 'insufficient driver' when there is none at all";
  EXPECT_NE(describe_cuda_unavailable(cudaErrorNoDevice, 13000, 13000).find("sees no GPU"),
            std::string::npos);
  EXPECT_NE(describe_cuda_unavailable(cudaErrorUnknown, 13000, 13000).find("cudaErrorUnknown"),
            std::string::npos);
}

TEST(CudaUnavailable, ThisMachinesAnswerIsConsistent) {
  EXPECT_EQ(cuda_device_count() == 0, !cuda_unavailable_reason().empty())
      << cuda_unavailable_reason();
}

TEST(DeviceAddress, TheLegacyDefaultStreamIsRecognised) {
  EXPECT_TRUE(is_legacy_default_stream(nullptr));
  EXPECT_TRUE(is_legacy_default_stream(cudaStreamLegacy));
  EXPECT_FALSE(is_legacy_default_stream(cudaStreamPerThread));
}

}  // namespace
}  // namespace tte
