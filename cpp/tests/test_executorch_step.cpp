// A failed call into ExecuTorch becomes a Status that says why
// (program/executorch_step.h): the reason this library reported wins, then
// ExecuTorch's own error lines, else a sentence per step and Error; the code
// follows whose fault it is (a damaged plan is the program's, not the
// caller's argument).
#include <gtest/gtest.h>

#include <string>

#include "common/executorch_failure.h"
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
  tte::ExecuTorchStep call(step);
  return call.failed(error, "cannot do it");
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
  tte::ExecuTorchStep call(ProgramStep::kLoadMethod);
  ASSERT_TRUE(tte::in_executorch_call());
  const std::string first = "Missing operator: aten::frobnicate.out";
  const std::string second = "Overriding output data pointer failed";
  tte::note_executorch_error_line(first.data(), first.size());
  tte::note_executorch_error_line(second.data(), second.size());
  const tte::Status status = call.failed(Error::OperatorMissing, "cannot load method 'forward'");
  EXPECT_TRUE(contains(status.message(), "; ExecuTorch: " + first + " / " + second))
      << status.message();
}

TEST(ExecuTorchStep, TheReasonThisLibraryReportedWins) {
  tte::ExecuTorchStep call(ProgramStep::kLoadMethod);
  tte::report_to_executorch(tte::Status(TTE_ERROR_NO_DEVICE, "no CUDA device"));
  const tte::Status status =
      call.failed(Error::Internal, "cannot load method 'forward'", "TensorRTBackend delegate 0: ");
  EXPECT_EQ(status.code(), TTE_ERROR_NO_DEVICE);
  EXPECT_EQ(status.message(),
            "cannot load method 'forward': TensorRTBackend delegate 0: no CUDA device");
}

TEST(ExecuTorchStep, ADamagedMethodMetaIsAnInvalidProgram) {
  const tte::Status status = tte::damaged_method_meta(Error::InvalidArgument, "method 'forward'");
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_TRUE(contains(status.message(),
                       "method 'forward': the method's description in the program "
                       "is damaged"))
      << status.message();
}

}  // namespace
