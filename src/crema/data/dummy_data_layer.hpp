// DummyData: tops of configured shapes filled by fillers, for tests and
// benchmarks. Shapes come from dummy_data_param.shape (one for all tops or
// one per top) or the legacy num/channels/height/width fields; fillers from
// data_filler (none: constant 0; one for all tops; or one per top). Tops with
// a constant filler are filled once at set-up; the others are refilled on
// every Forward.
#ifndef CREMA_DATA_DUMMY_DATA_LAYER_HPP_
#define CREMA_DATA_DUMMY_DATA_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class DummyDataLayer : public Layer<Dtype> {
 public:
  explicit DummyDataLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  // The shapes are fixed at set-up.
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}

  const char* type() const override { return "DummyData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  // One instance can serve every solver thread: it holds no per-solver state.
  bool ShareInParallel() const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

  // The shape of top `top_index`, from the N-D or the legacy fields.
  std::vector<int> TopShape(int top_index) const;
  // Refuses a field repeated neither once nor once per top.
  void RequireOnceOrPerTop(int size, int num_tops, const char* field) const;

  // Either one filler for every top or one per top; refill_[i] says whether
  // filler i runs on every Forward (it is not constant).
  std::vector<std::unique_ptr<Filler<Dtype>>> fillers_;
  std::vector<bool> refill_;
};

}  // namespace crema

#endif  // CREMA_DATA_DUMMY_DATA_LAYER_HPP_
