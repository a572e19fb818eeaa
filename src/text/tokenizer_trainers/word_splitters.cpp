#include "mlm/text/tokenizer_trainers/word_splitters.h"

#include <memory>
#include <string>

#include "../hf/components.h"

namespace mlm::text::tokenizer_trainers {

WordSplitterFactory word_splitter(const PipelineOptions& options) {
  return [options]() -> WordSplitter {
    static const std::string origin = "the trained tokenizer";
    const nlohmann::json normalizer = normalizer_json(options), pre_tokenizer = pre_tokenizer_json(options);
    std::shared_ptr<const hf::Normalizer> normalize;
    if (!normalizer.is_null()) normalize = hf::make_normalizer(hf::JsonReader(normalizer, "normalizer", origin));
    std::shared_ptr<const hf::PreTokenizer> split =
        hf::make_pre_tokenizer(hf::JsonReader(pre_tokenizer, "pre_tokenizer", origin));
    auto text = std::make_shared<std::string>();
    auto pieces = std::make_shared<hf::Pieces>();
    return [normalize, split, text, pieces](std::string_view line, const std::function<void(std::string_view)>& word) {
      std::string_view input = line;
      if (normalize) {
        text->assign(line);
        normalize->normalize(*text);
        input = *text;
      }
      pieces->clear();
      split->split(input, true, *pieces);
      for (const auto& piece : pieces->pieces) word(pieces->view(piece));
    };
  };
}

}  // namespace mlm::text::tokenizer_trainers
