// A mixture scheduled by phase, end to end on the tiny config: the first phase leaves a source
// out at one temperature and masks 30%, the second adds it at another and masks 10%; every
// evaluation writes each source's masked accuracy; a run stopped inside a phase or at the
// boundary resumes bit for bit.
#include <gtest/gtest.h>

#include "mlm/config/config_loader.h"
#include "recorded_run.h"

namespace mlm::train::mixture_phases_test {  // its own: the tests build as unity files
namespace {

using namespace mlm::train::testing;

config::RunConfig mixture_phases(const fs::path& dir) {
  const std::string corpus = std::string(MLM_FIXTURES_DIR) + "/corpus/";
  std::string yaml = read_text(fs::path(MLM_SOURCE_DIR) / "configs" / "tiny.yaml");
  yaml +=
      "\nphases:\n"
      "  - name: two\n"
      "    steps: 4\n"
      "    set: {data.temperature: 0.7, data.source_weights: {docs: 0}, masking.mlm_probability: 0.3}\n"
      "  - name: three\n"
      "    steps: 4\n"
      "    set: {data.temperature: 0.3, masking.mlm_probability: 0.1}\n";
  return config::load_config_from_string(
      yaml, "mixture_phases.yaml",
      tiny_overrides(dir, {"data.train_files=[]", "data.valid_files=[]", "data.valid_fraction=0.1",
                           "data.sources=[{name: prose, files: [" + corpus + "train.txt]}, {name: held, files: [" +
                               corpus + "valid.txt]}, {name: docs, files: [" + corpus + "docs.jsonl]}]",
                           "train.max_steps=0", "checkpoint.every_steps=0", "eval.every_steps=4",
                           "eval.max_batches=2"}));
}

TEST(TrainerMixturePhases, EachPhaseDrawsAndMasksAsItSaysAndEvaluatesEachSource) {
  const auto dir = fresh_dir("mixture_phases_straight");
  const auto run = run_trainer(mixture_phases(dir));
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.steps.size(), 8u);
  // The phase's masking rate: 8 x 64-token rows a step, so a few hundred tokens draw it.
  for (size_t i = 0; i < 8; ++i) {
    const double rate = static_cast<double>(run.steps[i].num_masked) / static_cast<double>(run.steps[i].tokens);
    EXPECT_NEAR(rate, i < 4 ? 0.3 : 0.1, 0.06) << "step " << i + 1;
  }
  int evaluations = 0;
  for (const auto& row : read_metrics(dir)) {
    if (!row.contains("eval_mlm_accuracy")) continue;
    ++evaluations;
    for (const char* source : {"prose", "held", "docs"}) {
      ASSERT_TRUE(row.contains(std::string("eval_mlm_accuracy/") + source)) << row.dump();
      const double accuracy = row[std::string("eval_mlm_accuracy/") + source].get<double>();
      EXPECT_GE(accuracy, 0.0);
      EXPECT_LE(accuracy, 1.0);
    }
  }
  EXPECT_EQ(evaluations, 2);  // at each phase's end
  // The first phase never opened 'docs'; its mixture_sizes.json holds the three sizes.
  EXPECT_TRUE(fs::exists(dir / "mixture_sizes.json"));
}

TEST(TrainerMixturePhases, ResumeInsideAPhaseIsExact) {
  const auto straight = run_trainer(mixture_phases(fresh_dir("mixture_phases_inside_straight")));
  expect_stop_and_resume_equal(mixture_phases(fresh_dir("mixture_phases_inside_split")), 2, straight);
}

TEST(TrainerMixturePhases, ResumeAtThePhaseBoundaryIsExact) {
  const auto straight = run_trainer(mixture_phases(fresh_dir("mixture_phases_boundary_straight")));
  expect_stop_and_resume_equal(mixture_phases(fresh_dir("mixture_phases_boundary_split")), 4, straight);
}

}  // namespace
}  // namespace mlm::train::mixture_phases_test
