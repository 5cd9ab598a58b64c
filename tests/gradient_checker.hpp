// Checks a layer's analytic gradients against central finite differences.
//
// The objective is a fixed random projection of every top, L = sum_t <w_t, top_t>,
// so one backward pass (top diffs = w) gives the analytic gradient of every
// bottom and parameter element, and each element's numeric gradient costs two
// forward passes. Random weights make cancelling errors vanishingly unlikely.
#ifndef CREMA_TESTS_GRADIENT_CHECKER_HPP_
#define CREMA_TESTS_GRADIENT_CHECKER_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "crema/blob.hpp"
#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class GradientChecker {
 public:
  // kink / kink_range: elements whose value lies within kink_range of kink are
  // skipped, since the layer is not differentiable there (ReLU at 0, say).
  GradientChecker(Dtype stepsize, Dtype threshold, unsigned seed = 1701, Dtype kink = 0,
                  Dtype kink_range = -1)
      : stepsize_(stepsize),
        threshold_(threshold),
        seed_(seed),
        kink_(kink),
        kink_range_(kink_range) {}

  // Sets the layer up on bottom/top and checks the gradient of every bottom
  // (or only bottom check_bottom when >= 0) and of every learnable parameter.
  void CheckGradient(Layer<Dtype>* layer, const std::vector<Blob<Dtype>*>& bottom,
                     const std::vector<Blob<Dtype>*>& top, int check_bottom = -1) {
    layer->SetUp(bottom, top);
    std::vector<Blob<Dtype>*> checked;
    std::vector<std::string> names;
    for (size_t i = 0; i < layer->blobs().size(); ++i) {
      if (!layer->param_propagate_down(static_cast<int>(i))) continue;
      checked.push_back(layer->blobs()[i].get());
      names.push_back("param " + std::to_string(i));
    }
    std::vector<bool> propagate_down(bottom.size(), check_bottom < 0);
    for (size_t i = 0; i < bottom.size(); ++i) {
      if (check_bottom >= 0 && static_cast<int>(i) != check_bottom) continue;
      propagate_down[i] = true;
      checked.push_back(bottom[i]);
      names.push_back("bottom " + std::to_string(i));
    }

    // Shape the tops, then draw the projection weights.
    Objective(layer, bottom, top);
    std::mt19937 weight_rng(seed_);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    weights_.assign(top.size(), {});
    for (size_t t = 0; t < top.size(); ++t) {
      weights_[t].resize(top[t]->count());
      for (auto& w : weights_[t]) w = static_cast<Dtype>(uniform(weight_rng));
    }

    // Analytic gradients.
    Objective(layer, bottom, top);
    for (size_t t = 0; t < top.size(); ++t) {
      std::copy(weights_[t].begin(), weights_[t].end(), top[t]->mutable_cpu_diff());
    }
    for (auto& param : layer->blobs()) {
      cpu_set(param->count(), Dtype(0), param->mutable_cpu_diff());
    }
    for (Blob<Dtype>* b : bottom) cpu_set(b->count(), Dtype(0), b->mutable_cpu_diff());
    layer->Backward(top, propagate_down, bottom);
    std::vector<std::vector<Dtype>> analytic(checked.size());
    for (size_t i = 0; i < checked.size(); ++i) {
      analytic[i].assign(checked[i]->cpu_diff(), checked[i]->cpu_diff() + checked[i]->count());
    }

    // Numeric gradients, element by element.
    for (size_t i = 0; i < checked.size(); ++i) {
      Blob<Dtype>* blob = checked[i];
      for (int j = 0; j < blob->count(); ++j) {
        const Dtype value = blob->cpu_data()[j];
        if (kink_range_ >= 0 && std::fabs(value - kink_) <= kink_range_) continue;
        blob->mutable_cpu_data()[j] = value + stepsize_;
        const double plus = Objective(layer, bottom, top);
        blob->mutable_cpu_data()[j] = value - stepsize_;
        const double minus = Objective(layer, bottom, top);
        blob->mutable_cpu_data()[j] = value;
        const double numeric = (plus - minus) / (2.0 * stepsize_);
        const double computed = analytic[i][j];
        const double scale = std::max({std::fabs(computed), std::fabs(numeric), 1.0});
        EXPECT_NEAR(computed, numeric, threshold_ * scale)
            << layer->type() << " layer, " << names[i] << ", element " << j << " (value "
            << value << ")";
      }
    }
  }

  // For layers whose every top element depends only on the bottom element at
  // the same index: the same check, named for readability at call sites.
  void CheckGradientEltwise(Layer<Dtype>* layer, const std::vector<Blob<Dtype>*>& bottom,
                            const std::vector<Blob<Dtype>*>& top) {
    CheckGradient(layer, bottom, top);
  }

 private:
  // Runs the forward pass from the same random state every time (so dropout
  // and the like draw the same masks) and returns the projected objective.
  double Objective(Layer<Dtype>* layer, const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) {
    Context::set_random_seed(seed_);
    layer->Forward(bottom, top);
    double objective = 0;
    for (size_t t = 0; t < top.size() && t < weights_.size(); ++t) {
      const Dtype* data = top[t]->cpu_data();
      for (int j = 0; j < top[t]->count(); ++j) objective += double(weights_[t][j]) * data[j];
    }
    return objective;
  }

  Dtype stepsize_;
  Dtype threshold_;
  unsigned seed_;
  Dtype kink_;
  Dtype kink_range_;
  std::vector<std::vector<Dtype>> weights_;
};

}  // namespace crema

#endif  // CREMA_TESTS_GRADIENT_CHECKER_HPP_
