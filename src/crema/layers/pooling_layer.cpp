#include "crema/layers/pooling_layer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "crema/util/thread_pool.hpp"

namespace crema {

namespace {

// A window clipped to the image, and the divisor of average pooling: the
// window's size clipped only to the padded input, so padding counts.
struct Window {
  int h_begin, h_end, w_begin, w_end;
  int padded_size;
  int width() const { return w_end - w_begin; }
  int size() const { return std::max(h_end - h_begin, 0) * std::max(width(), 0); }
};

Window WindowAt(const PoolingGeometry& g, int ph, int pw) {
  const int h_start = ph * g.stride_h - g.pad_h;
  const int w_start = pw * g.stride_w - g.pad_w;
  const int h_stop = std::min(h_start + g.kernel_h, g.height + g.pad_h);
  const int w_stop = std::min(w_start + g.kernel_w, g.width + g.pad_w);
  Window window;
  window.padded_size = (h_stop - h_start) * (w_stop - w_start);
  window.h_begin = std::max(h_start, 0);
  window.w_begin = std::max(w_start, 0);
  window.h_end = std::min(h_stop, g.height);
  window.w_end = std::min(w_stop, g.width);
  return window;
}

// The k-th position of a window, in row-major order, as an index into the plane.
int PlaneIndex(const Window& window, int k, int plane_width) {
  return (window.h_begin + k / window.width()) * plane_width + window.w_begin + k % window.width();
}

// Picks a position with probability proportional to its value, the uniform
// draw u in [0, 1) choosing where along the cumulative sum to stop. When
// rounding leaves the draw past the end, the last positive value is taken;
// an all-zero window gives its first position; an empty one gives -1.
template <typename Dtype>
int PickProportional(const Dtype* plane, int plane_width, const Window& window, Dtype u) {
  if (window.size() == 0) return -1;
  Dtype total = 0;
  for (int k = 0; k < window.size(); ++k) total += plane[PlaneIndex(window, k, plane_width)];
  const Dtype threshold = u * total;
  Dtype cumulative = 0;
  int fallback = PlaneIndex(window, 0, plane_width);
  for (int k = 0; k < window.size(); ++k) {
    const int index = PlaneIndex(window, k, plane_width);
    cumulative += plane[index];
    if (plane[index] > 0) fallback = index;
    if (cumulative > threshold) return index;
  }
  return fallback;
}

// One tap of max pooling across a row of windows: for pw in [begin, end), the
// input at tap + pw * stride replaces out[pw] (and its index selected[pw])
// when larger. Unconditional stores of selected values, on pointers that do
// not alias, let the compiler vectorise it with no branch to mispredict.
template <typename Dtype>
void MaxIntoRow(const Dtype* __restrict in, int tap, int stride, int begin, int end,
                Dtype* __restrict out, int* __restrict selected) {
  for (int pw = begin; pw < end; ++pw) {
    const int index = tap + pw * stride;
    const Dtype value = in[index];
    const Dtype kept = out[pw];
    // All ones when value > kept (which also leaves a kept NaN in place).
    const int take = -static_cast<int>(value > kept);
    out[pw] = kept < value ? value : kept;
    selected[pw] = (index & take) | (selected[pw] & ~take);
  }
}

// The same for a fixed KH x KW kernel, a whole window at a time: the running
// maximum stays in registers across the (unrolled) taps.
template <int KH, int KW, typename Dtype>
void MaxWindowsOfRow(const Dtype* __restrict in, int width, int first_tap, int stride, int begin,
                     int end, Dtype* __restrict out, int* __restrict selected) {
  for (int pw = begin; pw < end; ++pw) {
    const int corner = first_tap + pw * stride;
    int best = corner;
    Dtype best_value = in[corner];
    for (int kh = 0; kh < KH; ++kh) {
      for (int kw = (kh == 0 ? 1 : 0); kw < KW; ++kw) {
        const int index = corner + kh * width + kw;
        const Dtype value = in[index];
        const int take = -static_cast<int>(value > best_value);
        best_value = best_value < value ? value : best_value;
        best = (index & take) | (best & ~take);
      }
    }
    out[pw] = best_value;
    selected[pw] = best;
  }
}

// Caffe's output size: rounded up (or down) number of strides, and with
// padding, no window may start in the trailing padding.
int PooledSize(int input_size, int kernel, int stride, int pad, bool any_padding,
               PoolingParameter::RoundMode round_mode) {
  const double strides = static_cast<double>(input_size + 2 * pad - kernel) / stride;
  int pooled = static_cast<int>(round_mode == PoolingParameter::FLOOR ? std::floor(strides)
                                                                      : std::ceil(strides)) +
               1;
  if (any_padding && (pooled - 1) * stride >= input_size + pad) --pooled;
  return pooled;
}

}  // namespace

template <typename Dtype>
void PoolingLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& /*bottom*/,
                                     const std::vector<Blob<Dtype>*>& /*top*/) {
  const PoolingParameter& param = this->layer_param_.pooling_param();
  global_pooling_ = param.global_pooling();
  // OpenCV's ceil_mode says BVLC's round_mode as a bool: false is FLOOR.
  round_mode_ = param.round_mode();
  if (param.has_ceil_mode()) {
    const PoolingParameter::RoundMode asked =
        param.ceil_mode() ? PoolingParameter::CEIL : PoolingParameter::FLOOR;
    CREMA_LAYER_REQUIRE(!param.has_round_mode() || param.round_mode() == asked,
                        "ceil_mode: " << (param.ceil_mode() ? "true" : "false")
                                      << " contradicts round_mode: "
                                      << PoolingParameter::RoundMode_Name(param.round_mode()));
    round_mode_ = asked;
  }
  if (global_pooling_) {
    CREMA_LAYER_REQUIRE(!param.has_kernel_size() && !param.has_kernel_h() && !param.has_kernel_w(),
                        "global_pooling takes the whole plane as its kernel: do not set "
                        "kernel_size, kernel_h or kernel_w");
  } else {
    CREMA_LAYER_REQUIRE(param.has_kernel_size() != (param.has_kernel_h() || param.has_kernel_w()),
                        "give either kernel_size or kernel_h and kernel_w (exactly one form)");
    CREMA_LAYER_REQUIRE(param.has_kernel_size() || (param.has_kernel_h() && param.has_kernel_w()),
                        "a non-square kernel needs both kernel_h and kernel_w");
  }
  CREMA_LAYER_REQUIRE(!param.has_pad() || (!param.has_pad_h() && !param.has_pad_w()),
                      "give either pad or pad_h and pad_w, not both");
  CREMA_LAYER_REQUIRE(param.has_pad_h() == param.has_pad_w(), "pad_h and pad_w go together");
  CREMA_LAYER_REQUIRE(!param.has_stride() || (!param.has_stride_h() && !param.has_stride_w()),
                      "give either stride or stride_h and stride_w, not both");
  CREMA_LAYER_REQUIRE(param.has_stride_h() == param.has_stride_w(),
                      "stride_h and stride_w go together");
  ReadWindowParameters(param);
}

template <typename Dtype>
void PoolingLayer<Dtype>::ReadWindowParameters(const PoolingParameter& param) {
  PoolingGeometry& g = geometry_;
  if (!global_pooling_) {
    g.kernel_h = static_cast<int>(param.has_kernel_size() ? param.kernel_size() : param.kernel_h());
    g.kernel_w = static_cast<int>(param.has_kernel_size() ? param.kernel_size() : param.kernel_w());
    CREMA_LAYER_REQUIRE(g.kernel_h > 0 && g.kernel_w > 0,
                        "kernel must be positive, got " << g.kernel_h << "x" << g.kernel_w);
  }
  g.pad_h = static_cast<int>(param.has_pad_h() ? param.pad_h() : param.pad());
  g.pad_w = static_cast<int>(param.has_pad_w() ? param.pad_w() : param.pad());
  g.stride_h = static_cast<int>(param.has_stride_h() ? param.stride_h() : param.stride());
  g.stride_w = static_cast<int>(param.has_stride_w() ? param.stride_w() : param.stride());
  CREMA_LAYER_REQUIRE(g.stride_h > 0 && g.stride_w > 0,
                      "stride must be positive, got " << g.stride_h << "x" << g.stride_w);
  CREMA_LAYER_REQUIRE(g.pad_h >= 0 && g.pad_w >= 0,
                      "pad must not be negative, got " << g.pad_h << "x" << g.pad_w);
  if (global_pooling_) {
    CREMA_LAYER_REQUIRE(g.pad_h == 0 && g.pad_w == 0 && g.stride_h == 1 && g.stride_w == 1,
                        "global_pooling needs pad 0 and stride 1, got pad "
                            << g.pad_h << "x" << g.pad_w << " and stride " << g.stride_h << "x"
                            << g.stride_w);
    return;
  }
  if (g.pad_h > 0 || g.pad_w > 0) {
    CREMA_LAYER_REQUIRE(
        param.pool() == PoolingParameter::MAX || param.pool() == PoolingParameter::AVE,
        "padding is implemented for MAX and AVE pooling only");
    CREMA_LAYER_REQUIRE(g.pad_h < g.kernel_h && g.pad_w < g.kernel_w,
                        "pad must be smaller than the kernel, got pad "
                            << g.pad_h << "x" << g.pad_w << " for kernel " << g.kernel_h << "x"
                            << g.kernel_w);
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "expects a 4-D bottom (num, channels, height, width), got shape "
                          << bottom[0]->shape_string());
  PoolingGeometry& g = geometry_;
  g.height = bottom[0]->height();
  g.width = bottom[0]->width();
  if (global_pooling_) {
    g.kernel_h = g.height;
    g.kernel_w = g.width;
  }
  const PoolingParameter& param = this->layer_param_.pooling_param();
  const bool any_padding = g.pad_h > 0 || g.pad_w > 0;
  g.pooled_height = PooledSize(g.height, g.kernel_h, g.stride_h, g.pad_h, any_padding, round_mode_);
  g.pooled_width = PooledSize(g.width, g.kernel_w, g.stride_w, g.pad_w, any_padding, round_mode_);
  CREMA_LAYER_REQUIRE(g.pooled_height > 0 && g.pooled_width > 0,
                      "kernel " << g.kernel_h << "x" << g.kernel_w
                                << " does not fit the padded input of bottom shape "
                                << bottom[0]->shape_string());
  num_planes_ = bottom[0]->num() * bottom[0]->channels();
  top[0]->Reshape(bottom[0]->num(), bottom[0]->channels(), g.pooled_height, g.pooled_width);
  if (top.size() > 1) top[1]->ReshapeLike(*top[0]);

  const size_t index_bytes = static_cast<size_t>(top[0]->count()) * sizeof(int);
  if (param.pool() != PoolingParameter::AVE &&
      (!selected_index_ || selected_index_->size() < index_bytes)) {
    selected_index_.reset(new SyncedMemory(index_bytes));
  }
  if (param.pool() == PoolingParameter::STOCHASTIC) uniforms_.ReshapeLike(*top[0]);
}

template <typename Dtype>
void PoolingLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  switch (this->layer_param_.pooling_param().pool()) {
    case PoolingParameter::MAX:
      ForwardMaxCpu(*bottom[0], top);
      break;
    case PoolingParameter::AVE:
      ForwardAveCpu(*bottom[0], top[0]);
      break;
    case PoolingParameter::STOCHASTIC:
      if (this->phase_ == TRAIN) {
        ForwardStochasticTrainCpu(*bottom[0], top[0]);
      } else {
        ForwardStochasticTestCpu(*bottom[0], top[0]);
      }
      break;
  }
}

namespace {

// The output columns whose windows lie wholly inside the image's width:
// [first, second). A kernel wider than the padded-left image has none (and
// C++'s division would round the negative span up to one).
std::pair<int, int> InteriorColumns(const PoolingGeometry& g) {
  const int last_start = g.width + g.pad_w - g.kernel_w;
  const int begin = std::min(g.pooled_width, (g.pad_w + g.stride_w - 1) / g.stride_w);
  const int end = last_start < 0
                      ? begin
                      : std::max(begin, std::min(g.pooled_width, last_start / g.stride_w + 1));
  return {begin, end};
}

// Output columns [begin, end) of a row whose windows lie wholly inside the
// image, without a branch per comparison (a kept maximum is a select): a
// window at a time for 2x2 and 3x3 kernels, otherwise tap by tap across the
// row. Taps in row-major order and a strict comparison keep the first
// maximum, as MaxEdgeWindows does.
template <typename Dtype>
void MaxInteriorWindows(const Dtype* in, const PoolingGeometry& g, int first_tap, int begin,
                        int end, Dtype* out_row, int* selected_row) {
  if (g.kernel_h == 2 && g.kernel_w == 2) {
    MaxWindowsOfRow<2, 2>(in, g.width, first_tap, g.stride_w, begin, end, out_row, selected_row);
    return;
  }
  if (g.kernel_h == 3 && g.kernel_w == 3) {
    MaxWindowsOfRow<3, 3>(in, g.width, first_tap, g.stride_w, begin, end, out_row, selected_row);
    return;
  }
  for (int pw = begin; pw < end; ++pw) {
    out_row[pw] = in[first_tap + pw * g.stride_w];
    selected_row[pw] = first_tap + pw * g.stride_w;
  }
  for (int kh = 0; kh < g.kernel_h && begin < end; ++kh) {
    for (int kw = (kh == 0 ? 1 : 0); kw < g.kernel_w; ++kw) {
      MaxIntoRow(in, first_tap + kh * g.width + kw, g.stride_w, begin, end, out_row, selected_row);
    }
  }
}

// The other columns of output row ph, whose windows the image's edge cuts
// (padding, or a rounded-up size): the first maximum in row-major order; -1
// for an empty window.
template <typename Dtype>
void MaxEdgeWindows(const Dtype* in, const PoolingGeometry& g, int ph, int skip_begin, int skip_end,
                    Dtype* out_row, int* selected_row) {
  for (int pw = 0; pw < g.pooled_width; ++pw) {
    if (pw == skip_begin) pw = skip_end;
    if (pw >= g.pooled_width) break;
    const Window window = WindowAt(g, ph, pw);
    int best = -1;
    Dtype best_value = 0;
    for (int h = window.h_begin; h < window.h_end; ++h) {
      const Dtype* row = in + h * g.width;
      for (int w = window.w_begin; w < window.w_end; ++w) {
        if (best < 0 || row[w] > best_value) {
          best = h * g.width + w;
          best_value = row[w];
        }
      }
    }
    out_row[pw] = best_value;
    selected_row[pw] = best;
  }
}

// Max pooling of one plane: each output and the input index it took.
template <typename Dtype>
void MaxPoolPlane(const Dtype* in, const PoolingGeometry& g, std::pair<int, int> interior,
                  Dtype* out, int* selected) {
  for (int ph = 0; ph < g.pooled_height; ++ph) {
    Dtype* out_row = out + ph * g.pooled_width;
    int* selected_row = selected + ph * g.pooled_width;
    const int h_start = ph * g.stride_h - g.pad_h;
    const bool rows_inside = h_start >= 0 && h_start + g.kernel_h <= g.height;
    const int begin = rows_inside ? interior.first : g.pooled_width;
    const int end = rows_inside ? interior.second : g.pooled_width;
    MaxInteriorWindows(in, g, h_start * g.width - g.pad_w, begin, end, out_row, selected_row);
    MaxEdgeWindows(in, g, ph, begin, end, out_row, selected_row);
  }
}

}  // namespace

template <typename Dtype>
void PoolingLayer<Dtype>::ForwardMaxCpu(const Blob<Dtype>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const PoolingGeometry& g = geometry_;
  const int plane_size = g.height * g.width;
  const int pooled_plane = g.pooled_height * g.pooled_width;
  const Dtype* in_planes = bottom.cpu_data();
  Dtype* out_planes = top[0]->mutable_cpu_data();
  int* selected_planes = static_cast<int*>(selected_index_->mutable_cpu_data());
  const std::pair<int, int> interior = InteriorColumns(g);
  ParallelForPlanes(num_planes_, plane_size, [&](int first, int end) {
    for (int plane = first; plane < end; ++plane) {
      MaxPoolPlane(in_planes + static_cast<size_t>(plane) * plane_size, g, interior,
                   out_planes + static_cast<size_t>(plane) * pooled_plane,
                   selected_planes + static_cast<size_t>(plane) * pooled_plane);
    }
  });
  if (top.size() > 1) {
    const int* best = static_cast<const int*>(selected_index_->cpu_data());
    Dtype* mask = top[1]->mutable_cpu_data();
    for (int i = 0; i < top[1]->count(); ++i) mask[i] = static_cast<Dtype>(best[i]);
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::ForwardAveCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top) {
  const PoolingGeometry& g = geometry_;
  const int plane_size = g.height * g.width;
  const int pooled_plane = g.pooled_height * g.pooled_width;
  const Dtype* in_planes = bottom.cpu_data();
  Dtype* out_planes = top->mutable_cpu_data();
  ParallelForPlanes(num_planes_, plane_size, [&](int first, int end) {
    for (int plane = first; plane < end; ++plane) {
      const Dtype* in = in_planes + static_cast<size_t>(plane) * plane_size;
      Dtype* out = out_planes + static_cast<size_t>(plane) * pooled_plane;
      for (int ph = 0; ph < g.pooled_height; ++ph) {
        for (int pw = 0; pw < g.pooled_width; ++pw) {
          const Window window = WindowAt(g, ph, pw);
          Dtype sum = 0;
          for (int h = window.h_begin; h < window.h_end; ++h) {
            const Dtype* row = in + h * g.width;
            for (int w = window.w_begin; w < window.w_end; ++w) sum += row[w];
          }
          out[ph * g.pooled_width + pw] = sum / window.padded_size;
        }
      }
    }
  });
}

template <typename Dtype>
void PoolingLayer<Dtype>::ForwardStochasticTrainCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top) {
  const PoolingGeometry& g = geometry_;
  rng_uniform(uniforms_.count(), Dtype(0), Dtype(1), uniforms_.mutable_cpu_data());
  const Dtype* uniform = uniforms_.cpu_data();
  const Dtype* in = bottom.cpu_data();
  Dtype* out = top->mutable_cpu_data();
  int* selected = static_cast<int*>(selected_index_->mutable_cpu_data());
  for (int plane = 0; plane < num_planes_; ++plane) {
    for (int ph = 0; ph < g.pooled_height; ++ph) {
      for (int pw = 0; pw < g.pooled_width; ++pw) {
        const int out_index = ph * g.pooled_width + pw;
        const int picked = PickProportional(in, g.width, WindowAt(g, ph, pw), uniform[out_index]);
        out[out_index] = picked >= 0 ? in[picked] : Dtype(0);
        selected[out_index] = picked;
      }
    }
    in += g.height * g.width;
    const int pooled_plane = g.pooled_height * g.pooled_width;
    out += pooled_plane;
    uniform += pooled_plane;
    selected += pooled_plane;
  }
}

// At test time the expectation of the sample: sum(x^2) / sum(x).
template <typename Dtype>
void PoolingLayer<Dtype>::ForwardStochasticTestCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top) {
  const PoolingGeometry& g = geometry_;
  const Dtype* in = bottom.cpu_data();
  Dtype* out = top->mutable_cpu_data();
  for (int plane = 0; plane < num_planes_; ++plane) {
    for (int ph = 0; ph < g.pooled_height; ++ph) {
      for (int pw = 0; pw < g.pooled_width; ++pw) {
        const Window window = WindowAt(g, ph, pw);
        Dtype sum = 0;
        Dtype sum_of_squares = 0;
        for (int k = 0; k < window.size(); ++k) {
          const Dtype value = in[PlaneIndex(window, k, g.width)];
          sum += value;
          sum_of_squares += value * value;
        }
        out[ph * g.pooled_width + pw] = sum > 0 ? sum_of_squares / sum : Dtype(0);
      }
    }
    in += g.height * g.width;
    out += g.pooled_height * g.pooled_width;
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  switch (this->layer_param_.pooling_param().pool()) {
    case PoolingParameter::MAX:
      BackwardSelectedCpu(*top[0], bottom[0]);
      break;
    case PoolingParameter::AVE:
      BackwardAveCpu(*top[0], bottom[0]);
      break;
    case PoolingParameter::STOCHASTIC:
      RequireTrainPhaseForStochasticBackward();
      BackwardSelectedCpu(*top[0], bottom[0]);
      break;
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::RequireTrainPhaseForStochasticBackward() const {
  CREMA_LAYER_REQUIRE(this->phase_ == TRAIN,
                      "STOCHASTIC pooling has a gradient only in the TRAIN phase (it samples "
                      "there); at TEST it has no backward");
}

template <typename Dtype>
void PoolingLayer<Dtype>::BackwardSelectedCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom) {
  const PoolingGeometry& g = geometry_;
  const int plane_size = g.height * g.width;
  const int pooled_plane = g.pooled_height * g.pooled_width;
  const Dtype* top_diff_planes = top.cpu_diff();
  const int* selected_planes = static_cast<const int*>(selected_index_->cpu_data());
  Dtype* bottom_diff_planes = bottom->mutable_cpu_diff();
  ParallelForPlanes(num_planes_, plane_size, [&](int first, int end) {
    Dtype* bottom_diff = bottom_diff_planes + static_cast<size_t>(first) * plane_size;
    std::fill(bottom_diff, bottom_diff + static_cast<size_t>(end - first) * plane_size, Dtype(0));
    const size_t pooled_offset = static_cast<size_t>(first) * pooled_plane;
    const Dtype* top_diff = top_diff_planes + pooled_offset;
    const int* selected = selected_planes + pooled_offset;
    for (int plane = first; plane < end; ++plane) {
      for (int i = 0; i < pooled_plane; ++i) {
        if (selected[i] >= 0) bottom_diff[selected[i]] += top_diff[i];
      }
      bottom_diff += plane_size;
      top_diff += pooled_plane;
      selected += pooled_plane;
    }
  });
}

template <typename Dtype>
void PoolingLayer<Dtype>::BackwardAveCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom) {
  const PoolingGeometry& g = geometry_;
  const int plane_size = g.height * g.width;
  const int pooled_plane = g.pooled_height * g.pooled_width;
  const Dtype* top_diff_planes = top.cpu_diff();
  Dtype* bottom_diff_planes = bottom->mutable_cpu_diff();
  ParallelForPlanes(num_planes_, plane_size, [&](int first, int end) {
    for (int plane = first; plane < end; ++plane) {
      Dtype* bottom_diff = bottom_diff_planes + static_cast<size_t>(plane) * plane_size;
      const Dtype* top_diff = top_diff_planes + static_cast<size_t>(plane) * pooled_plane;
      std::fill(bottom_diff, bottom_diff + plane_size, Dtype(0));
      for (int ph = 0; ph < g.pooled_height; ++ph) {
        for (int pw = 0; pw < g.pooled_width; ++pw) {
          const Window window = WindowAt(g, ph, pw);
          const Dtype share = top_diff[ph * g.pooled_width + pw] / window.padded_size;
          for (int h = window.h_begin; h < window.h_end; ++h) {
            Dtype* row = bottom_diff + h * g.width;
            for (int w = window.w_begin; w < window.w_end; ++w) row[w] += share;
          }
        }
      }
    }
  });
}

#ifndef CREMA_CUDA
STUB_GPU(PoolingLayer);
#endif

INSTANTIATE_CLASS(PoolingLayer);
REGISTER_LAYER_CLASS(Pooling);

}  // namespace crema
