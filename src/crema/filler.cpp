#include "crema/filler.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "crema/util/math_functions.hpp"

namespace crema {
namespace {

// Only gaussian knows what `sparse` means; Caffe rejects it elsewhere, and so
// do we, rather than silently ignoring part of the user's configuration.
void RequireNotSparse(const FillerParameter& param) {
  CREMA_REQUIRE(param.sparse() < 0, "filler '" << param.type() << "' does not support sparse ("
                                               << "sparse: " << param.sparse()
                                               << "); only 'gaussian' does");
}

template <typename Dtype>
void RequireAxes(const FillerParameter& param, const Blob<Dtype>& blob, int min_axes,
                 const char* why) {
  CREMA_REQUIRE(blob.num_axes() >= min_axes,
                "filler '" << param.type() << "' needs a blob of at least " << min_axes << " axes "
                           << why << ", got shape " << blob.shape_string());
}

template <typename Dtype>
class ConstantFiller : public Filler<Dtype> {
 public:
  explicit ConstantFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    RequireNotSparse(this->filler_param_);
    Dtype* data = blob->mutable_cpu_data();
    std::fill(data, data + blob->count(), static_cast<Dtype>(this->filler_param_.value()));
  }
};

template <typename Dtype>
class UniformFiller : public Filler<Dtype> {
 public:
  explicit UniformFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    const FillerParameter& param = this->filler_param_;
    RequireNotSparse(param);
    CREMA_REQUIRE(param.min() <= param.max(), "filler 'uniform': min (" << param.min()
                                                                        << ") must not exceed max ("
                                                                        << param.max() << ")");
    Dtype* data = blob->mutable_cpu_data();
    if (param.min() == param.max()) {
      // An empty interval: the only sensible value is the bound itself.
      std::fill(data, data + blob->count(), static_cast<Dtype>(param.min()));
      return;
    }
    rng_uniform<Dtype>(blob->count(), param.min(), param.max(), data);
  }
};

template <typename Dtype>
class GaussianFiller : public Filler<Dtype> {
 public:
  explicit GaussianFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    const FillerParameter& param = this->filler_param_;
    CREMA_REQUIRE(param.std() > 0, "filler 'gaussian': std must be positive, got " << param.std());
    if (param.sparse() >= 0) {
      RequireAxes(param, *blob, 1, "for sparse (axis 0 counts the outputs)");
    }
    Dtype* data = blob->mutable_cpu_data();
    rng_gaussian<Dtype>(blob->count(), param.mean(), param.std(), data);
    if (param.sparse() >= 0) KeepSparse(param.sparse(), blob);
  }

 private:
  // Keeps each value with probability sparse / num_outputs, so each input
  // feeds about `sparse` outputs on average.
  static void KeepSparse(int sparse, Blob<Dtype>* blob) {
    if (blob->count() == 0) return;
    const int num_outputs = blob->shape(0);
    const Dtype keep_probability =
        std::min(Dtype(1), static_cast<Dtype>(sparse) / static_cast<Dtype>(num_outputs));
    std::vector<int> keep(blob->count());
    rng_bernoulli<Dtype>(blob->count(), keep_probability, keep.data());
    Dtype* data = blob->mutable_cpu_data();
    for (int i = 0; i < blob->count(); ++i) data[i] *= keep[i];
  }
};

// Each item along axis 0 becomes a point of the probability simplex:
// non-negative values that sum to one.
template <typename Dtype>
class PositiveUnitballFiller : public Filler<Dtype> {
 public:
  explicit PositiveUnitballFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    RequireNotSparse(this->filler_param_);
    if (blob->count() == 0) return;
    Dtype* data = blob->mutable_cpu_data();
    rng_uniform<Dtype>(blob->count(), 0, 1, data);
    const int num_rows = blob->num_axes() > 0 ? blob->shape(0) : 1;
    const int row_size = blob->count() / num_rows;
    for (int row = 0; row < num_rows; ++row) {
      Dtype* row_data = data + row * row_size;
      Dtype sum = 0;
      for (int i = 0; i < row_size; ++i) sum += row_data[i];
      for (int i = 0; i < row_size; ++i) row_data[i] /= sum;
    }
  }
};

template <typename Dtype>
void RequireFans(const FillerParameter& param, const Blob<Dtype>& blob) {
  // Caffe's files put xavier on 1-axis bias blobs too, so one axis is enough.
  RequireAxes(param, blob, 1, "(axis 0 counts outputs)");
}

// The n that xavier and msra scale by: fan_in, fan_out or their mean, where
// axis 0 counts outputs and axis 1 counts inputs; a 1-axis blob (a bias) has
// fan_out = count, as in Caffe. The blob is not empty.
template <typename Dtype>
Dtype VarianceNormalizer(const FillerParameter& param, const Blob<Dtype>& blob) {
  const Dtype fan_in = static_cast<Dtype>(blob.count() / blob.shape(0));
  const Dtype fan_out =
      static_cast<Dtype>(blob.num_axes() > 1 ? blob.count() / blob.shape(1) : blob.count());
  switch (param.variance_norm()) {
    case FillerParameter::FAN_OUT:
      return fan_out;
    case FillerParameter::AVERAGE:
      return (fan_in + fan_out) / Dtype(2);
    case FillerParameter::FAN_IN:
    default:
      return fan_in;
  }
}

template <typename Dtype>
class XavierFiller : public Filler<Dtype> {
 public:
  explicit XavierFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    RequireNotSparse(this->filler_param_);
    RequireFans(this->filler_param_, *blob);
    if (blob->count() == 0) return;
    // U[-a, a) has variance a^2 / 3, so a = sqrt(3 / n) gives variance 1 / n.
    const Dtype n = VarianceNormalizer(this->filler_param_, *blob);
    const Dtype bound = std::sqrt(Dtype(3) / n);
    rng_uniform<Dtype>(blob->count(), -bound, bound, blob->mutable_cpu_data());
  }
};

template <typename Dtype>
class MSRAFiller : public Filler<Dtype> {
 public:
  explicit MSRAFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    RequireNotSparse(this->filler_param_);
    RequireFans(this->filler_param_, *blob);
    if (blob->count() == 0) return;
    // Variance 2 / n keeps activations' scale through ReLU layers (He et al.).
    const Dtype n = VarianceNormalizer(this->filler_param_, *blob);
    rng_gaussian<Dtype>(blob->count(), Dtype(0), std::sqrt(Dtype(2) / n), blob->mutable_cpu_data());
  }
};

// The kernel of bilinear upsampling, for initialising a deconvolution that
// upsamples by a factor f with kernel size 2f - f % 2.
template <typename Dtype>
class BilinearFiller : public Filler<Dtype> {
 public:
  explicit BilinearFiller(const FillerParameter& param) : Filler<Dtype>(param) {}
  void Fill(Blob<Dtype>* blob) override {
    const FillerParameter& param = this->filler_param_;
    RequireNotSparse(param);
    CREMA_REQUIRE(blob->num_axes() == 4,
                  "filler 'bilinear' needs a 4-D blob (num, channels, "
                  "height, width), got shape "
                      << blob->shape_string());
    const int kernel_size = blob->shape(3);
    CREMA_REQUIRE(blob->shape(2) == kernel_size,
                  "filler 'bilinear' needs a square kernel, got shape " << blob->shape_string());
    if (blob->count() == 0) return;
    const std::vector<Dtype> weights = Weights1d(kernel_size);
    Dtype* data = blob->mutable_cpu_data();
    const int kernel_area = kernel_size * kernel_size;
    for (int i = 0; i < blob->count(); ++i) {
      const int x = i % kernel_size;
      const int y = (i % kernel_area) / kernel_size;
      data[i] = weights[x] * weights[y];
    }
  }

 private:
  // The kernel is separable: the 1-D tent along each axis, centred at c
  // (in units of f), so its values are symmetric for odd and even sizes alike.
  static std::vector<Dtype> Weights1d(int kernel_size) {
    const int f = (kernel_size + 1) / 2;
    const Dtype center = static_cast<Dtype>(kernel_size - 1) / static_cast<Dtype>(2 * f);
    std::vector<Dtype> weights(kernel_size);
    for (int x = 0; x < kernel_size; ++x) {
      weights[x] = 1 - std::abs(static_cast<Dtype>(x) / f - center);
    }
    return weights;
  }
};

template <typename Dtype>
using FillerMaker = std::function<std::unique_ptr<Filler<Dtype>>(const FillerParameter&)>;

template <typename Dtype, template <typename> class FillerClass>
std::unique_ptr<Filler<Dtype>> MakeFiller(const FillerParameter& param) {
  return std::make_unique<FillerClass<Dtype>>(param);
}

template <typename Dtype>
const std::map<std::string, FillerMaker<Dtype>>& FillerRegistry() {
  static const std::map<std::string, FillerMaker<Dtype>> registry = {
      {"constant", MakeFiller<Dtype, ConstantFiller>},
      {"uniform", MakeFiller<Dtype, UniformFiller>},
      {"gaussian", MakeFiller<Dtype, GaussianFiller>},
      {"positive_unitball", MakeFiller<Dtype, PositiveUnitballFiller>},
      {"xavier", MakeFiller<Dtype, XavierFiller>},
      {"msra", MakeFiller<Dtype, MSRAFiller>},
      {"bilinear", MakeFiller<Dtype, BilinearFiller>},
  };
  return registry;
}

template <typename Dtype>
std::string KnownFillerTypes() {
  std::string known;
  for (const auto& entry : FillerRegistry<Dtype>()) {
    if (!known.empty()) known += ", ";
    known += entry.first;
  }
  return known;
}

}  // namespace

template <typename Dtype>
std::unique_ptr<Filler<Dtype>> GetFiller(const FillerParameter& param) {
  const auto& registry = FillerRegistry<Dtype>();
  const auto found = registry.find(param.type());
  CREMA_REQUIRE(found != registry.end(), "unknown filler type '"
                                             << param.type()
                                             << "'; known types: " << KnownFillerTypes<Dtype>());
  return found->second(param);
}

template std::unique_ptr<Filler<float>> GetFiller<float>(const FillerParameter& param);
template std::unique_ptr<Filler<double>> GetFiller<double>(const FillerParameter& param);

}  // namespace crema
