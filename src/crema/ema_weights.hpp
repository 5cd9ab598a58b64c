// The exponential moving average of a net's learnable weights (SolverParameter
// ema_decay): after each update, ema = decay * ema + (1 - decay) * w, the
// average starting at the weights training starts from. The solver tests
// and snapshots with it swapped into the net (Swapped), and keeps it in the
// solver state so that a resumed run continues it bitwise.
#ifndef CREMA_EMA_WEIGHTS_HPP_
#define CREMA_EMA_WEIGHTS_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/blob.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class EmaWeights {
 public:
  explicit EmaWeights(Dtype decay) : decay_(decay) {}

  // Whether the average holds values yet (Start or FromState ran).
  bool started() const { return !average_.empty(); }
  // Starts the average at the weights as they are.
  void Start(const std::vector<Blob<Dtype>*>& weights);
  // One step: average = decay * average + (1 - decay) * weights.
  void Update(const std::vector<Blob<Dtype>*>& weights);
  // Exchanges the average with the weights' values (twice restores both).
  void Swap(const std::vector<Blob<Dtype>*>& weights);

  void ToState(SolverState* state) const;
  // Restores an average a state holds; a state without one (Caffe's, or a
  // run without ema_decay) starts it at the weights; a count or shape that
  // does not match the net is an error naming the state.
  void FromState(const SolverState& state, const std::vector<Blob<Dtype>*>& weights,
                 const std::string& origin);

  const std::vector<std::shared_ptr<Blob<Dtype>>>& average() const { return average_; }

 private:
  const Dtype decay_;
  std::vector<std::shared_ptr<Blob<Dtype>>> average_;  // one per learnable blob
  Blob<Dtype> scratch_;                                 // Swap's temporary
};

// What the solver warns of when ema_decay averages a net whose BatchNorm
// layers keep a slower running average of their own (moving_average_fraction
// above 0.99; Caffe's default is 0.999): the statistics a test uses are then
// averaged twice over about a thousand batches each, and lag the weights far
// enough that tests at a high rate can score near chance while training goes
// well. Names the first such layer and how many there are; empty when none.
std::string SlowBatchNormAdvice(const std::vector<const LayerParameter*>& layers);

// Swaps the average into the weights for the scope's duration (tests,
// snapshots), and back when the scope ends, also by an exception; does
// nothing for a null or not yet started average.
template <typename Dtype>
class EmaSwappedIn {
 public:
  EmaSwappedIn(EmaWeights<Dtype>* ema, const std::vector<Blob<Dtype>*>& weights);
  ~EmaSwappedIn();

 private:
  EmaWeights<Dtype>* const ema_;
  const std::vector<Blob<Dtype>*>& weights_;
  DISABLE_COPY_AND_ASSIGN(EmaSwappedIn);
};

}  // namespace crema

#endif  // CREMA_EMA_WEIGHTS_HPP_
