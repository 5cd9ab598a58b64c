#include "crema/format/insert_splits.hpp"

#include <map>
#include <sstream>
#include <utility>

#include "crema/common.hpp"

namespace crema {

namespace {
using TopId = std::pair<int, int>;  // (layer index, top index)
}  // namespace

std::string SplitLayerName(const std::string& layer_name, const std::string& blob_name,
                           int blob_idx) {
  std::ostringstream name;
  name << blob_name << "_" << layer_name << "_" << blob_idx << "_split";
  return name.str();
}

std::string SplitBlobName(const std::string& layer_name, const std::string& blob_name,
                          int blob_idx, int split_idx) {
  std::ostringstream name;
  name << SplitLayerName(layer_name, blob_name, blob_idx) << "_" << split_idx;
  return name.str();
}

void InsertSplits(const NetParameter& param, NetParameter* param_split) {
  param_split->CopyFrom(param);
  param_split->clear_layer();
  std::map<std::string, TopId> last_producer;        // blob name -> its latest top
  std::map<TopId, TopId> bottom_source;              // (layer, bottom) -> top feeding it
  std::map<TopId, int> consumer_count;               // top -> bottoms it feeds
  std::map<TopId, float> top_loss_weight;            // top -> its loss weight
  for (int i = 0; i < param.layer_size(); ++i) {
    const LayerParameter& layer = param.layer(i);
    for (int j = 0; j < layer.bottom_size(); ++j) {
      const std::string& blob_name = layer.bottom(j);
      auto producer = last_producer.find(blob_name);
      CREMA_REQUIRE(producer != last_producer.end(),
                    "layer '" << layer.name() << "' (" << layer.type() << "): bottom blob '"
                              << blob_name << "' is not produced by any layer before it");
      bottom_source[{i, j}] = producer->second;
      ++consumer_count[producer->second];
    }
    for (int j = 0; j < layer.top_size(); ++j) {
      last_producer[layer.top(j)] = {i, j};
      if (j < layer.loss_weight_size() && layer.loss_weight(j) != 0) {
        top_loss_weight[{i, j}] = layer.loss_weight(j);
      }
    }
  }
  // A top that is both a loss and consumed needs a split whose first top
  // carries the loss and feeds nobody; consumers take the tops after it.
  std::map<TopId, int> next_split_top;
  for (int i = 0; i < param.layer_size(); ++i) {
    LayerParameter* layer = param_split->add_layer();
    layer->CopyFrom(param.layer(i));
    for (int j = 0; j < layer->bottom_size(); ++j) {
      const TopId source = bottom_source[{i, j}];
      const bool has_loss = top_loss_weight.count(source) > 0;
      const int splits = consumer_count[source] + (has_loss ? 1 : 0);
      if (splits <= 1) continue;
      const std::string& source_layer = param.layer(source.first).name();
      int& next = next_split_top[source];
      if (next == 0 && has_loss) next = 1;
      layer->set_bottom(j, SplitBlobName(source_layer, layer->bottom(j), source.second, next++));
    }
    for (int j = 0; j < layer->top_size(); ++j) {
      const TopId top{i, j};
      const bool has_loss = top_loss_weight.count(top) > 0;
      const int splits = consumer_count[top] + (has_loss ? 1 : 0);
      if (splits <= 1) continue;
      const std::string& blob_name = layer->top(j);
      LayerParameter* split = param_split->add_layer();
      split->set_name(SplitLayerName(layer->name(), blob_name, j));
      split->set_type("Split");
      split->add_bottom(blob_name);
      for (int k = 0; k < splits; ++k) {
        split->add_top(SplitBlobName(layer->name(), blob_name, j, k));
        if (has_loss) split->add_loss_weight(k == 0 ? top_loss_weight[top] : 0.f);
      }
      // The split now carries this top's loss.
      if (has_loss) layer->set_loss_weight(j, 0.f);
    }
  }
}

}  // namespace crema
