// mlm-data: shows what the trainer is fed. `--batches N --json` prints the first N collated,
// masked batches of a split as JSON lines (with --split valid exactly the batches evaluation
// scores: same order, eval.batch_size, eval.seed); `--bench` measures read + tokenize + pack +
// mask throughput (a prepared store: read + pack + mask), with the start-up time, the bytes
// this rank read and its peak memory. `--from-checkpoint DIR` starts where that checkpoint's
// run resumes (the rank's saved data position). `prepare` tokenizes the corpus once into a
// prepared store (data.store); `verify` reads every byte of the stores a config names and
// names each damaged file. `--plan` prints a mixture's sources per phase: size in tokens,
// target share and the share its draw realises over the phase (cli/common/mixture_plan.h).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/common/cli_app.h"
#include "cli/common/mixture_plan.h"
#include "cli/common/mlm_data_commands.h"
#include "mlm/config/data_plan.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/proc_stats.h"

namespace {

using mlm::data::PackedSequence;
using mlm::masking::MaskedBatch;

struct Options {
  mlm::cli::ConfigOptions config;
  std::string split = "train";
  int64_t batches = 1;
  bool json = false;
  bool bench = false;
  double bench_seconds = 10;
  bool bench_epoch = false;
  bool plan = false;
  std::string from_checkpoint;
  int rank = 0;
  int world_size = 1;
};

/// The data position `rank` saved in checkpoint `dir` (trainer_state.json).
nlohmann::json saved_position(const std::string& dir, int rank) {
  const auto path = std::filesystem::path(dir) / "trainer_state.json";
  std::ifstream in(path);
  if (!in) throw mlm::UsageError("--from-checkpoint: cannot read " + path.string());
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw mlm::CheckpointError(path.string() + ": not valid JSON: " + e.what());
  }
  const auto& ranks = state.value("ranks", nlohmann::json::array());
  if (!ranks.is_array() || rank >= static_cast<int>(ranks.size()) ||
      !ranks[static_cast<size_t>(rank)].contains("data_position")) {
    throw mlm::CheckpointError(path.string() + ": no data position for rank " + std::to_string(rank));
  }
  return ranks[static_cast<size_t>(rank)]["data_position"];
}

nlohmann::json rows(const std::vector<int64_t>& flat, int64_t batch, int64_t seq_len) {
  auto out = nlohmann::json::array();
  for (int64_t b = 0; b < batch; ++b) {
    out.push_back(std::vector<int64_t>(flat.begin() + b * seq_len, flat.begin() + (b + 1) * seq_len));
  }
  return out;
}

nlohmann::json batch_json(int64_t index, const MaskedBatch& batch,
                          const std::vector<PackedSequence>& sequences,
                          const mlm::text::Tokenizer& tokenizer) {
  nlohmann::json j;
  j["batch"] = index;
  j["input_ids"] = rows(batch.input_ids, batch.batch_size, batch.seq_len);
  j["token_type_ids"] = rows(batch.token_type_ids, batch.batch_size, batch.seq_len);
  j["attention_mask"] = rows(batch.attention_mask, batch.batch_size, batch.seq_len);
  j["labels"] = rows(batch.labels, batch.batch_size, batch.seq_len);
  if (!batch.nsp_labels.empty()) j["nsp_labels"] = batch.nsp_labels;
  auto sample_ids = nlohmann::json::array();
  auto text = nlohmann::json::array();
  auto masked_text = nlohmann::json::array();
  for (int64_t b = 0; b < batch.batch_size; ++b) {
    const auto& seq = sequences[b];
    sample_ids.push_back(seq.sample_id);
    text.push_back(tokenizer.decode(seq.ids));
    std::vector<int32_t> corrupted;
    for (int64_t s = 0; s < batch.seq_len; ++s) {
      if (batch.attention_mask[b * batch.seq_len + s] != 0) {
        corrupted.push_back(static_cast<int32_t>(batch.input_ids[b * batch.seq_len + s]));
      }
    }
    masked_text.push_back(tokenizer.decode(corrupted));  // [MASK] decodes as itself
  }
  j["sample_ids"] = sample_ids;
  j["text"] = text;
  j["masked_text"] = masked_text;
  return j;
}

int run(const Options& options) {
  mlm::config::RunConfig config;
  if (!options.config.load(config)) return 0;
  if (options.plan) return mlm::cli::plan_command(config, options.world_size, options.json);
  if (options.split != "train" && options.split != "valid") {
    throw mlm::UsageError("--split must be train or valid, got '" + options.split + "'");
  }
  const auto tokenizer = mlm::text::load_or_train_tokenizer(config.tokenizer, config.data);
  std::optional<nlohmann::json> resume;
  if (!options.from_checkpoint.empty()) resume = saved_position(options.from_checkpoint, options.rank);
  // The batches the trainer (train) or the evaluator (valid) draws: same sizes, same seeds.
  const auto opening = mlm::SteadyClock::now();
  mlm::masking::BatchStream stream(
      mlm::config::resolve_data_plan(config, options.rank, options.world_size), tokenizer,
      options.split == "valid" ? mlm::data::Split::valid : mlm::data::Split::train,
      resume ? &*resume : nullptr);
  const double open_seconds = mlm::seconds_since(opening);

  if (options.bench) {
    const auto start = mlm::SteadyClock::now();
    const int64_t start_epoch = stream.source().epoch();
    int64_t tokens = 0, batches = 0, masked = 0;
    double elapsed = 0, first_batch_seconds = 0;
    // --bench-epoch: to the end of the epoch the stream is in (its share of it, per rank).
    while (options.bench_epoch ? stream.source().epoch() == start_epoch
                               : elapsed < options.bench_seconds) {
      const auto batch = stream.next();
      if (!batch) break;
      for (auto m : batch->attention_mask) tokens += m;
      masked += batch->num_masked();
      if (batches++ == 0) first_batch_seconds = mlm::seconds_since(start);
      elapsed = mlm::seconds_since(start);
    }
    const auto c = stream.source().counters();
    const auto io = mlm::process_io();
    const std::string store =
        config.data.store.empty() ? "" : std::filesystem::absolute(config.data.store).string();
    std::cout << nlohmann::json{{"split", options.split},
                                {"rank", options.rank},
                                {"world_size", options.world_size},
                                {"open_seconds", open_seconds},
                                {"first_batch_seconds", first_batch_seconds},
                                {"seconds", elapsed},
                                {"batches", batches},
                                {"sequences", c.sequences},
                                {"tokens", tokens},
                                {"masked", masked},
                                {"tokens_per_s", elapsed > 0 ? tokens / elapsed : 0.0},
                                {"num_workers", config.data.num_workers},
                                {"seq_len", config.data.seq_len},
                                {"batch_size", stream.batch_size()},
                                {"epoch", stream.source().epoch()},
                                {"bad_records", c.bad_records},
                                {"invalid_utf8_fixes", c.invalid_utf8_fixes},
                                {"bytes_read", c.bytes_read},
                                {"proc_rchar", io.rchar},
                                {"proc_read_bytes", io.read_bytes},
                                {"store_resident_bytes",
                                 store.empty() ? 0 : mlm::mapped_resident_bytes(store)},
                                {"peak_rss_bytes", mlm::peak_rss_bytes()},
                                {"position", stream.source().resume_state()}}
                     .dump()
              << std::endl;
    return 0;
  }

  for (int64_t i = 0; i < options.batches; ++i) {
    const auto batch = stream.next();
    if (!batch) break;
    if (options.json) {
      std::cout << batch_json(i, *batch, stream.rows(), tokenizer).dump() << "\n";
    } else {
      std::cout << "batch " << i << ": " << batch->batch_size << " x " << batch->seq_len << ", "
                << batch->num_masked() << " masked\n  "
                << tokenizer.decode(stream.rows().front().ids) << "\n";
    }
  }
  std::cout.flush();
  const auto c = stream.source().counters();
  mlm::log::info("data", "{} sequences, epoch {}, {} bad records skipped, {} invalid UTF-8 repaired",
                 c.sequences, stream.source().epoch(), c.bad_records, c.invalid_utf8_fixes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  mlm::data::PrepareOptions prepare;
  CLI::App* prepare_app = nullptr;
  CLI::App* verify_app = nullptr;
  return mlm::cli::run_main(
      "mlm-data", "Print collated, masked batches of a split, or measure data throughput", argc, argv,
      [&](CLI::App& app) {
        options.config.add_to(app);
        // `mlm-data prepare --config F`: --config and --set fall through to the options above.
        prepare_app = app.add_subcommand(
            "prepare", "Tokenize data.train_files (and the valid split) once into the prepared store data.store");
        prepare_app->fallthrough();
        prepare_app->add_option("--threads", prepare.threads, "Tokenizing threads (0 = one per core)")
            ->capture_default_str();
        prepare_app->add_flag("--overwrite", prepare.overwrite,
                                  "Delete the store's own files first (a complete store too)");
        verify_app = app.add_subcommand(
            "verify", "Read every byte of the prepared store(s) the config names and name each damaged file");
        verify_app->fallthrough();
        app.add_option("--split", options.split, "train or valid")->capture_default_str();
        app.add_option("--batches", options.batches, "Batches to print")->capture_default_str();
        app.add_flag("--json", options.json, "One JSON object per batch");
        app.add_flag("--bench", options.bench, "Measure read+tokenize+pack+mask tokens/s");
        app.add_option("--bench-seconds", options.bench_seconds, "Length of --bench")
            ->capture_default_str();
        app.add_flag("--bench-epoch", options.bench_epoch,
                     "Run --bench to the end of the current epoch instead of --bench-seconds");
        app.add_flag("--plan", options.plan,
                     "Print each phase's mixture: source sizes, target and realised shares (--json: one "
                     "object per phase; --world-size: the global batch's ranks)");
        app.add_option("--from-checkpoint", options.from_checkpoint,
                       "Start where this checkpoint's run resumes (its data position for --rank)");
        app.add_option("--rank", options.rank, "Data-parallel rank to show")->capture_default_str();
        app.add_option("--world-size", options.world_size, "Data-parallel world size")
            ->capture_default_str();
      },
      [&] {
        if (!prepare_app->parsed() && !verify_app->parsed()) return run(options);
        mlm::config::RunConfig config;
        if (!options.config.load(config)) return 0;
        return prepare_app->parsed() ? mlm::cli::prepare_command(config, prepare) : mlm::cli::verify_command(config);
      });
}
