// The choice of mapped staging for host tensors of device engines: on by
// default only on integrated GPUs, overridden by "1" or "0", anything else
// ignored with one warning.
#include <gtest/gtest.h>

#include <string>

#include "backend/mapped_staging.h"

namespace {

TEST(MappedStaging, IsTheDefaultOnlyOnIntegratedGpus) {
  EXPECT_TRUE(tte::mapped_staging_from_env(nullptr, true));
  EXPECT_FALSE(tte::mapped_staging_from_env(nullptr, false));
  EXPECT_TRUE(tte::mapped_staging_from_env("", true));
  EXPECT_FALSE(tte::mapped_staging_from_env("", false));
}

TEST(MappedStaging, OneAndZeroOverrideTheDefault) {
  EXPECT_TRUE(tte::mapped_staging_from_env("1", false));
  EXPECT_FALSE(tte::mapped_staging_from_env("0", true));
}

TEST(MappedStaging, OtherValuesKeepTheDefaultAndAreReportedOnce) {
  testing::internal::CaptureStderr();
  EXPECT_FALSE(tte::mapped_staging_from_env("yes", false));
  EXPECT_TRUE(tte::mapped_staging_from_env("10", true));
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(
      printed.find("ignoring TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING='yes' (expected 1 or 0)"),
      std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("'10'"), std::string::npos) << printed;
}

}  // namespace
