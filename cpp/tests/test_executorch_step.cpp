// A failed call into ExecuTorch becomes a Status that says why
// (program/executorch_step.h): the reason this library reported wins, then
// ExecuTorch's own error lines, else a sentence per step and Error; the code
// follows whose fault it is (a damaged plan is the program's, not the
// caller's argument).
#include <gtest/gtest.h>

#include <string>

#include <executorch/runtime/platform/log.h>

#include "common/call_context.h"
#include "program/executorch_step.h"
#include "text_match.h"

namespace {

using executorch::runtime::Error;
using tte::ProgramStep;

constexpr ProgramStep kSteps[] = {ProgramStep::kOpen,       ProgramStep::kMethodMeta,
                                  ProgramStep::kLoadMethod, ProgramStep::kSetInput,
                                  ProgramStep::kSetOutput,  ProgramStep::kExecute};
constexpr Error kErrors[] = {Error::Internal,
                             Error::InvalidState,
                             Error::EndOfMethod,
                             Error::NotSupported,
                             Error::NotImplemented,
                             Error::InvalidArgument,
                             Error::InvalidType,
                             Error::OperatorMissing,
                             Error::NotFound,
                             Error::MemoryAllocationFailed,
                             Error::AccessFailed,
                             Error::InvalidProgram,
                             Error::InvalidExternalData,
                             Error::OutOfResources,
                             Error::DelegateInvalidCompatibility,
                             Error::DelegateMemoryAllocationFailed,
                             Error::DelegateInvalidHandle};

using tte_test::contains;

TEST(ExecuTorchStep, EveryStepAndErrorHasASentence) {
  for (ProgramStep step : kSteps) {
    for (Error error : kErrors) {
      for (bool data_files : {false, true}) {
        const std::string sentence = tte::explain_executorch_error(step, error, data_files);
        EXPECT_GT(sentence.size(), 20u) << static_cast<int>(step) << "/" << static_cast<int>(error);
        // A sentence of what it means, never a bare code.
        EXPECT_FALSE(contains(sentence, "Error::")) << sentence;
      }
    }
  }
}

TEST(ExecuTorchStep, DataFilesAreNamedWhereTheyMayBeAtFault) {
  EXPECT_TRUE(contains(
      tte::explain_executorch_error(ProgramStep::kOpen, Error::InvalidProgram, true), ".ptd"));
  EXPECT_FALSE(contains(
      tte::explain_executorch_error(ProgramStep::kOpen, Error::InvalidProgram, false), ".ptd"));
  EXPECT_TRUE(
      contains(tte::explain_executorch_error(ProgramStep::kLoadMethod, Error::NotFound, true),
               "no .ptd given"));
  EXPECT_TRUE(
      contains(tte::explain_executorch_error(ProgramStep::kLoadMethod, Error::NotFound, false),
               "lives in a .ptd"));
  EXPECT_TRUE(contains(
      tte::explain_executorch_error(ProgramStep::kLoadMethod, Error::InvalidState, true), ".ptd"));
}

TEST(ExecuTorchStep, TheSentenceSaysWhatToDo) {
  EXPECT_TRUE(contains(
      tte::explain_executorch_error(ProgramStep::kLoadMethod, Error::OperatorMissing, false),
      "operator"));
  EXPECT_TRUE(
      contains(tte::explain_executorch_error(ProgramStep::kOpen, Error::NotSupported, false),
               "ExecuTorch "));
  EXPECT_TRUE(
      contains(tte::explain_executorch_error(ProgramStep::kExecute, Error::InvalidState, false),
               "open the program again"));
  EXPECT_TRUE(
      contains(tte::explain_executorch_error(ProgramStep::kSetInput, Error::InvalidType, false),
               "exported with"));
}

tte::Status failed_at(ProgramStep step, Error error) {
  tte::CallContext call;
  tte::ExecuTorchStep step_of_call(call, step);
  return step_of_call.failed(error, "cannot do it");
}

TEST(ExecuTorchStep, TheCodeSaysWhoseFaultItIs) {
  // Reading a damaged program: the program's fault.
  EXPECT_EQ(failed_at(ProgramStep::kOpen, Error::InvalidArgument).code(),
            TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(failed_at(ProgramStep::kLoadMethod, Error::InvalidState).code(),
            TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(failed_at(ProgramStep::kMethodMeta, Error::InvalidType).code(),
            TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(failed_at(ProgramStep::kExecute, Error::InvalidProgram).code(),
            TTE_ERROR_INVALID_PROGRAM);
  // Reading takes host memory only.
  EXPECT_EQ(failed_at(ProgramStep::kOpen, Error::MemoryAllocationFailed).code(),
            TTE_ERROR_HOST_OUT_OF_MEMORY);
  // A refused input is the caller's argument.
  EXPECT_EQ(failed_at(ProgramStep::kSetInput, Error::InvalidArgument).code(),
            TTE_ERROR_INVALID_ARGUMENT);
}

TEST(ExecuTorchStep, TheMessageNamesWhatFailedAndTheCode) {
  const tte::Status status = failed_at(ProgramStep::kExecute, Error::InvalidArgument);
  EXPECT_EQ(status.message().rfind("cannot do it: a kernel refused its arguments", 0), 0u)
      << status.message();
  EXPECT_TRUE(contains(status.message(), "InvalidArgument")) << status.message();
}

TEST(ExecuTorchStep, ExecuTorchsErrorLinesAreQuoted) {
  tte::CallContext call;
  tte::ExecuTorchStep step(call, ProgramStep::kLoadMethod);
  // Logged through ExecuTorch's own log, as its Method and Module do: the
  // route finds the call in progress.
  ET_LOG(Error, "Missing operator: aten::frobnicate.out");
  ET_LOG(Error, "Overriding output data pointer failed");
  const tte::Status status = step.failed(Error::OperatorMissing, "cannot load method 'forward'");
  EXPECT_TRUE(contains(status.message(),
                       "; ExecuTorch: Missing operator: aten::frobnicate.out / Overriding output "
                       "data pointer failed"))
      << status.message();
}

TEST(ExecuTorchStep, TheReasonThisLibraryReportedWins) {
  tte::CallContext call;
  tte::ExecuTorchStep step(call, ProgramStep::kLoadMethod);
  // As a delegate's init does, on the other side of ExecuTorch.
  tte::report_to_executorch(tte::CallInProgress::current(),
                            tte::Status(TTE_ERROR_NO_DEVICE, "no CUDA device"));
  const tte::Status status =
      step.failed(Error::Internal, "cannot load method 'forward'", "TensorRTBackend delegate 0: ");
  EXPECT_EQ(status.code(), TTE_ERROR_NO_DEVICE);
  EXPECT_EQ(status.message(),
            "cannot load method 'forward': TensorRTBackend delegate 0: no CUDA device");
}

TEST(ExecuTorchStep, TheCallIsInProgressOnlyWhileTheStepIsOpen) {
  tte::CallContext call;
  EXPECT_EQ(tte::CallInProgress::current(), nullptr);
  {
    tte::ExecuTorchStep step(call, ProgramStep::kExecute);
    EXPECT_EQ(tte::CallInProgress::current(), &call);
    EXPECT_TRUE(call.failure.is_open());
  }
  EXPECT_EQ(tte::CallInProgress::current(), nullptr);
  EXPECT_FALSE(call.failure.is_open());
  // Outside a step, ExecuTorch's lines are the log's, not the call's.
  ET_LOG(Error, "a line outside any call");
  EXPECT_TRUE(call.failure.log_lines().empty());
}

TEST(ExecuTorchStep, AnInnerStepKeepsTheOuterOnesReason) {
  tte::CallContext call;
  tte::ExecuTorchStep outer(call, ProgramStep::kLoadMethod);
  tte::report_to_executorch(&call, tte::Status(TTE_ERROR_NO_DEVICE, "no CUDA device"));
  {
    tte::ExecuTorchStep inner(call, ProgramStep::kMethodMeta);
  }
  EXPECT_EQ(call.failure.reported().code(), TTE_ERROR_NO_DEVICE);
  EXPECT_EQ(tte::CallInProgress::current(), &call);
}

TEST(ExecuTorchStep, EachCallKeepsItsOwnReason) {
  // Two calls on one thread, one inside the other's step (a Program API
  // call made from a delegate's frame would be one): each keeps its own.
  tte::CallContext first;
  tte::ExecuTorchStep first_step(first, ProgramStep::kExecute);
  {
    tte::CallContext second;
    tte::ExecuTorchStep second_step(second, ProgramStep::kLoadMethod);
    tte::report_to_executorch(tte::CallInProgress::current(),
                              tte::Status(TTE_ERROR_INVALID_PROGRAM, "second's reason"));
    EXPECT_EQ(second.failure.reported().message(), "second's reason");
  }
  EXPECT_EQ(tte::CallInProgress::current(), &first);
  EXPECT_TRUE(first.failure.reported().ok());
}

}  // namespace
