// mlm-tokenizer: trains the run's tokenizer (tokenizer.*) from its corpus
// (tokenizer.training_files, default data.train_files) and writes tokenizer.model: a
// sentencepiece model, or a tokenizer.json directory for byte_level_bpe and wordpiece.
#include <iostream>

#include "cli/common/cli_app.h"
#include "mlm/text/tokenizer.h"

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions options;
  return mlm::cli::run_main(
      "mlm-tokenizer", "Train the tokenizer of a run (writes tokenizer.model: a sentencepiece model or a tokenizer.json directory)", argc,
      argv, [&](CLI::App& app) { options.add_to(app); },
      [&] {
        mlm::config::RunConfig config;
        if (!options.load(config)) return 0;
        mlm::text::Tokenizer::train(
            config.tokenizer, mlm::text::tokenizer_training_files(config.tokenizer, config.data),
            mlm::text::ReadOptions::from(config.data));
        const auto tokenizer = mlm::text::Tokenizer::load(config.tokenizer.model);
        std::cout << "vocab_size " << tokenizer.size() << "\n"
                  << "model " << tokenizer.model_path() << "\n";
        return 0;
      });
}
