#include "crema/data/dummy_data_layer.hpp"

#include <cstdint>

namespace crema {

template <typename Dtype>
void DummyDataLayer<Dtype>::RequireOnceOrPerTop(int size, int num_tops, const char* field) const {
  CREMA_LAYER_REQUIRE(size == 1 || size == num_tops,
                      "dummy_data_param." << field << " is given " << size << " times for "
                                          << num_tops << " tops; give it once for all tops "
                                          << "or once per top");
}

template <typename Dtype>
std::vector<int> DummyDataLayer<Dtype>::TopShape(int top_index) const {
  const DummyDataParameter& param = this->layer_param_.dummy_data_param();
  // The legacy fields are unsigned: 3000000000 would be a negative int.
  auto pick = [this, top_index](const auto& values, const char* field) {
    const uint32_t value = values.size() == 1 ? values.Get(0) : values.Get(top_index);
    CREMA_LAYER_REQUIRE(value <= INT32_MAX, "dummy_data_param." << field << " for top " << top_index
                                                                << " is " << value
                                                                << ", not a valid size");
    return static_cast<int>(value);
  };
  if (param.shape_size() == 0) {
    return {pick(param.num(), "num"), pick(param.channels(), "channels"),
            pick(param.height(), "height"), pick(param.width(), "width")};
  }
  const BlobShape& shape = param.shape(param.shape_size() == 1 ? 0 : top_index);
  std::vector<int> dims(shape.dim_size());
  for (int i = 0; i < shape.dim_size(); ++i) {
    CREMA_LAYER_REQUIRE(shape.dim(i) >= 0 && shape.dim(i) <= INT32_MAX,
                        "shape for top " << top_index << " has dimension " << i << " = "
                                         << shape.dim(i) << ", not a valid size");
    dims[i] = static_cast<int>(shape.dim(i));
  }
  return dims;
}

template <typename Dtype>
void DummyDataLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const DummyDataParameter& param = this->layer_param_.dummy_data_param();
  const int num_tops = static_cast<int>(top.size());
  const int num_fillers = param.data_filler_size();
  CREMA_LAYER_REQUIRE(num_fillers <= 1 || num_fillers == num_tops,
                      "dummy_data_param.data_filler is given "
                          << num_fillers << " times for " << num_tops
                          << " tops; give it once for all tops, once per top, or not at all");
  const bool legacy =
      param.num_size() + param.channels_size() + param.height_size() + param.width_size() > 0;
  if (legacy) {
    CREMA_LAYER_REQUIRE(param.shape_size() == 0,
                        "dummy_data_param gives both shape and the legacy num/channels/height/"
                        "width fields; use one or the other");
    RequireOnceOrPerTop(param.num_size(), num_tops, "num");
    RequireOnceOrPerTop(param.channels_size(), num_tops, "channels");
    RequireOnceOrPerTop(param.height_size(), num_tops, "height");
    RequireOnceOrPerTop(param.width_size(), num_tops, "width");
  } else {
    RequireOnceOrPerTop(param.shape_size(), num_tops, "shape");
  }

  fillers_.clear();
  refill_.clear();
  if (num_fillers == 0) {
    FillerParameter zeros;
    zeros.set_type("constant");
    zeros.set_value(0);
    fillers_.push_back(GetFiller<Dtype>(zeros));
    refill_.push_back(false);
  } else {
    for (int i = 0; i < num_fillers; ++i) {
      fillers_.push_back(GetFiller<Dtype>(param.data_filler(i)));
      refill_.push_back(param.data_filler(i).type() != "constant");
    }
  }

  for (int t = 0; t < num_tops; ++t) {
    top[t]->Reshape(TopShape(t));
    // Constant tops get their values once, here; the others on each Forward.
    const int filler_index = fillers_.size() == 1 ? 0 : t;
    if (!refill_[filler_index] && top[t]->count() > 0) fillers_[filler_index]->Fill(top[t]);
  }
}

template <typename Dtype>
void DummyDataLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  for (size_t t = 0; t < top.size(); ++t) {
    const size_t filler_index = fillers_.size() == 1 ? 0 : t;
    if (refill_[filler_index] && top[t]->count() > 0) fillers_[filler_index]->Fill(top[t]);
  }
}

INSTANTIATE_CLASS(DummyDataLayer);
REGISTER_LAYER_CLASS(DummyData);

}  // namespace crema
