// The checks before a method loads (program/method_load_checks.h), compiled
// from its sources, on the MethodMeta of the fixture programs, some with a
// field of the program's flatbuffer changed (program.fbs: an I/O index past
// the value table, a planned buffer's size): damaged I/O entries and sizes,
// the planned-memory bound with and without max_planned_memory (exactly at
// it passes), device arenas kept out of the host bound, and what a
// device-planned method needs (a device, then a CUDA DeviceAllocator).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/executor/program.h>

#include "cuda/cuda_device.h"
#include "program/method_load_checks.h"
#include "text_match.h"

namespace {

namespace et = executorch::runtime;
using tte::Status;
using tte_test::contains;

std::vector<uint8_t> read_fixture(const std::string& name) {
  std::ifstream file(std::string(TTE_CPP_FIXTURE_DIR) + "/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

// Where things are in a flatbuffer (little-endian): a table's field, and
// the target of an offset.
template <typename T>
T read(const std::vector<uint8_t>& bytes, size_t at) {
  T value{};
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}
size_t follow(const std::vector<uint8_t>& bytes, size_t at) {
  return at + read<uint32_t>(bytes, at);
}
size_t field(const std::vector<uint8_t>& bytes, size_t table, int index) {
  const size_t vtable = table - read<int32_t>(bytes, table);
  const uint16_t offset = read<uint16_t>(bytes, vtable + 4 + 2 * index);
  return offset == 0 ? 0 : table + offset;
}

// The first execution plan of a .pte (Program field 1, ExecutionPlan).
size_t first_plan(const std::vector<uint8_t>& bytes) {
  const size_t program = follow(bytes, 0);
  const size_t plans = follow(bytes, field(bytes, program, 1));
  return follow(bytes, plans + 4);
}
// Element `i` of one of the plan's vectors: inputs (3), outputs (4), both
// [int]; non_const_buffer_sizes (8), [int64].
size_t plan_element(const std::vector<uint8_t>& bytes, int vector_field, size_t i) {
  const size_t plan = first_plan(bytes);
  const size_t vector = follow(bytes, field(bytes, plan, vector_field));
  return vector + 4 + i * (vector_field == 8 ? 8 : 4);
}

class MethodLoadChecks : public ::testing::Test {
 protected:
  // Loads the program in `bytes` (kept) and returns the check's verdict on
  // method 'forward'.
  Status check(std::vector<uint8_t> bytes, uint64_t max_planned_memory) {
    bytes_ = std::move(bytes);
    loader_ =
        std::make_unique<executorch::extension::BufferDataLoader>(bytes_.data(), bytes_.size());
    auto program = et::Program::load(loader_.get());
    EXPECT_TRUE(program.ok());
    if (!program.ok()) return Status(TTE_ERROR_INTERNAL, "the fixture did not load");
    program_ = std::make_unique<et::Program>(std::move(program.get()));
    auto meta = program_->method_meta("forward");
    EXPECT_TRUE(meta.ok());
    if (!meta.ok()) return Status(TTE_ERROR_INTERNAL, "no method_meta");
    host_bytes_ = 0;
    device_bytes_ = 0;
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
      auto size = meta->memory_planned_buffer_size(i);
      auto device = meta->memory_planned_buffer_device(i);
      if (size.ok() && *size > 0) {
        (device.ok() && !device->is_cpu() ? device_bytes_ : host_bytes_) += *size;
      }
    }
    return tte::check_method_before_load(*meta, "forward", max_planned_memory);
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<executorch::extension::BufferDataLoader> loader_;
  std::unique_ptr<et::Program> program_;
  uint64_t host_bytes_ = 0;
  uint64_t device_bytes_ = 0;
};

TEST_F(MethodLoadChecks, APlanWithinTheBoundPassesAndOnePastItIsRefused) {
  const std::vector<uint8_t> add_one = read_fixture("add_one.pte");
  ASSERT_FALSE(add_one.empty());
  EXPECT_TRUE(check(add_one, 0).ok()) << "within what is available";
  ASSERT_GT(host_bytes_, 1u);
  EXPECT_TRUE(check(add_one, host_bytes_).ok()) << "exactly at the bound";
  const Status status = check(add_one, host_bytes_ - 1);
  EXPECT_EQ(status.code(), TTE_ERROR_HOST_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(status.message(), "method 'forward' plans ")) << status.message();
  EXPECT_TRUE(contains(status.message(), " of host memory, more than max_planned_memory allows ("))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "raise max_planned_memory if that size is right"))
      << status.message();
}

TEST_F(MethodLoadChecks, WithoutABoundWhatIsAvailableIsTheLimit) {
  std::vector<uint8_t> huge = read_fixture("add_one.pte");
  const int64_t size = int64_t{1} << 62;
  // Buffer 0 of non_const_buffer_sizes is reserved: planned buffer 0 is
  // element 1.
  std::memcpy(huge.data() + plan_element(huge, 8, 1), &size, sizeof(size));
  const Status status = check(huge, 0);
  EXPECT_EQ(status.code(), TTE_ERROR_HOST_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(status.message(), "more than is available to this process now ("))
      << status.message();
  EXPECT_TRUE(
      contains(status.message(), "open the program with max_planned_memory set to at least " +
                                     std::to_string(size) + " (bytes)"))
      << status.message();
}

TEST_F(MethodLoadChecks, ANegativePlannedSizeIsDamage) {
  std::vector<uint8_t> damaged = read_fixture("add_one.pte");
  const int64_t size = -5;
  std::memcpy(damaged.data() + plan_element(damaged, 8, 1), &size, sizeof(size));
  const Status status = check(damaged, 0);
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(), "method 'forward' is damaged: planned buffer 0 has no valid size");
}

TEST_F(MethodLoadChecks, AnIoEntryPastTheValueTableIsDamage) {
  for (const int io : {3, 4}) {
    std::vector<uint8_t> damaged = read_fixture("add_one.pte");
    const int32_t index = 99999;
    std::memcpy(damaged.data() + plan_element(damaged, io, 0), &index, sizeof(index));
    const Status status = check(damaged, 0);
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM) << io;
    const std::string entry = io == 3 ? "input 0" : "output 0";
    EXPECT_TRUE(contains(status.message(), "method 'forward': " + entry +
                                               " cannot be read: the method's description in "
                                               "the program is damaged"))
        << status.message();
  }
}

TEST_F(MethodLoadChecks, DeviceArenasNeedADeviceAndACudaAllocator) {
  const Status status = check(read_fixture("device_planned.pte"), 0);
  ASSERT_GT(device_bytes_, 0u) << "the fixture plans memory on cuda:0";
  const std::string planned = "method 'forward' plans " + std::to_string(device_bytes_) +
                              " bytes on cuda:0 (exported with target_device=cuda:0)";
  if (tte::cuda_device_count() == 0) {
    EXPECT_EQ(status.code(), TTE_ERROR_NO_DEVICE);
    EXPECT_TRUE(contains(status.message(), planned + ", but this process sees no CUDA device"))
        << status.message();
  } else {
    // This test registers no DeviceAllocator (the plugin's is not linked).
    EXPECT_EQ(status.code(), TTE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(status.message(),
                         planned + ", but no CUDA DeviceAllocator is registered with ExecuTorch"))
        << status.message();
  }
}

TEST_F(MethodLoadChecks, DeviceArenasDoNotCountAgainstTheHostBound) {
  const std::vector<uint8_t> device_planned = read_fixture("device_planned.pte");
  check(device_planned, 0);
  ASSERT_GT(device_bytes_, 0u);
  // A bound that holds the host arenas only: refused for the device's sake,
  // never for host memory.
  const Status status = check(device_planned, host_bytes_ > 0 ? host_bytes_ : 1);
  EXPECT_NE(status.code(), TTE_ERROR_HOST_OUT_OF_MEMORY) << status.message();
  EXPECT_TRUE(contains(status.message(), "on cuda:0")) << status.message();
}

}  // namespace
