// Memory a caller lent read-only for one run on this thread: the Program API
// lends the inputs whose DLPack tensors carry DLPACK_FLAG_BITMASK_READ_ONLY
// (passed in TteInput.int_value), and a delegate that is about to write an
// input in place (TensorRTBackend's aliased_io, e.g. a KV-cache update) asks
// whether that input's memory is among them and refuses the call if so.
// The check lives where the write happens: only the delegate knows which of
// its arguments it updates in place, and only by address can it tell the
// caller's memory from a copy ExecuTorch or the Program API made of it.
// Runs through the stock runtime lend nothing.
#pragma once

#include <cstddef>
#include <string>

namespace tte {

// Lends memory for the scope's lifetime (one run); nothing is lent outside one.
class ReadOnlyLoan {
 public:
  ReadOnlyLoan();
  ~ReadOnlyLoan();
  ReadOnlyLoan(const ReadOnlyLoan&) = delete;
  ReadOnlyLoan& operator=(const ReadOnlyLoan&) = delete;

  // [data, data + size) is read-only; `label` names it ("input 1 of
  // 'forward' ('cache')"). Does nothing outside a loan.
  static void add(const void* data, size_t size, std::string label);
};

// The label of lent read-only memory that overlaps [data, data + size), or
// nullptr.
const std::string* read_only_label(const void* data, size_t size);

}  // namespace tte
