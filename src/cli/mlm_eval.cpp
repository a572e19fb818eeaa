// mlm-eval: masked-token accuracy, MLM loss and perplexity of a checkpoint or an exported
// (Hugging Face format) model directory on the validation split (or on --data files).
//   mlm-eval --config F --checkpoint DIR [--data FILE]... [--json]
#include <filesystem>
#include <iostream>

#include "cli/common/cli_app.h"
#include "mlm/config/config_loader.h"
#include "mlm/train/checkpoint_dir.h"
#include "mlm/train/device.h"
#include "mlm/train/evaluator.h"
#include "mlm/train/trainer.h"
#include "mlm/train/trainer_state.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace {

/// The tokenizer that goes with the weights: the checkpoint's (or export's) own copy, else
/// the config's tokenizer.model.
mlm::text::Tokenizer load_tokenizer(const fs::path& dir, const mlm::config::RunConfig& config) {
  for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.model"}) {
    if (fs::exists(dir / name)) return mlm::text::Tokenizer::load((dir / name).string());
  }
  mlm::log::info("eval", "{} holds no tokenizer model; using tokenizer.model {}", dir.string(),
                 config.tokenizer.model);
  return mlm::text::Tokenizer::load(config.tokenizer.model);
}

}  // namespace

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions config_options;
  std::string checkpoint;
  std::vector<std::string> data_files;
  bool json = false;
  return mlm::cli::run_main(
      "mlm-eval",
      "Evaluate a checkpoint or an exported model: masked-token accuracy, MLM loss, perplexity.",
      argc, argv,
      [&](CLI::App& app) {
        config_options.add_to(app);
        app.add_option("--checkpoint", checkpoint,
                       "A checkpoint directory (runs/x/checkpoints/step_...) or an exported "
                       "model directory (pytorch_model.bin)")
            ->required();
        app.add_option("--data", data_files,
                       "Evaluate on these files (paths or globs) instead of data.valid_files")
            ->take_all();
        app.add_flag("--json", json, "Print one JSON object instead of text");
      },
      [&]() -> int {
        mlm::config::RunConfig config;
        if (!config_options.load(config)) return mlm::kExitOk;  // --print-config
        if (!data_files.empty()) config.data.valid_files = data_files;
        const fs::path dir = checkpoint;
        if (!fs::is_directory(dir)) {
          throw mlm::UsageError("--checkpoint " + dir.string() + ": no such directory");
        }
        const bool is_checkpoint = fs::exists(dir / "trainer_state.json") || fs::exists(dir / "DONE");
        nlohmann::json extra;
        if (is_checkpoint) {
          mlm::train::verify_checkpoint_dir(dir, mlm::train::checkpoint_required_files());
          // The weights decide the architecture: take the checkpoint's model settings.
          const auto saved = mlm::config::load_config((dir / "config.yaml").string());
          config.model = saved.model;
          config.model.init_from.clear();
          extra["step"] = mlm::train::TrainerState::load(dir / "trainer_state.json").step;
        }

        const auto env = mlm::dist::DistEnv::from_environment();
        const auto device = mlm::train::resolve_device(config.train.device, env.local_rank);
        mlm::train::configure_threads(config.train.threads, env.local_world_size);
        mlm::train::configure_memory();
        auto comm = env.is_distributed()
                        ? mlm::dist::Communicator::create(env, config.distributed, device)
                        : mlm::dist::Communicator::single_process(device);
        mlm::log::set_rank(comm->rank());

        const auto tokenizer = load_tokenizer(dir, config);
        mlm::model::BertForPreTraining model(config.model, tokenizer.size(), tokenizer.vocab().ids.pad);
        if (is_checkpoint) {
          mlm::model::load_model_pt(model, (dir / "model.pt").string());
        } else {
          mlm::model::init_from_pretrained(model, dir.string());
        }
        model->to(device);
        const auto result = mlm::train::evaluate(model, config, tokenizer, *comm, device);
        if (!comm->is_main()) return mlm::kExitOk;
        if (json) {
          auto out = result.to_json();
          out.update(extra);
          std::cout << out.dump() << std::endl;
        } else {
          std::cout << "checkpoint        " << dir.string() << "\n"
                    << "masked accuracy   " << fmt::format("{:.4f}", result.masked_accuracy())
                    << fmt::format(" (unigram baseline {:.4f})", result.unigram_accuracy()) << "\n"
                    << "mlm loss          " << fmt::format("{:.4f}", result.mlm_loss()) << "\n"
                    << "perplexity        " << fmt::format("{:.2f}", result.perplexity()) << "\n"
                    << "masked tokens     " << result.num_masked << " in " << result.sequences
                    << " sequences\n";
          if (result.num_sentence_pairs > 0) {
            std::cout << "sentence pairs    " << fmt::format("{:.4f}", result.nsp_accuracy())
                      << " accuracy over " << result.num_sentence_pairs << "\n";
          }
        }
        return mlm::kExitOk;
      });
}
