// The learning rate at each iteration, a function of the solver's settings
// and the iteration alone (so a resumed run follows the same schedule):
// Caffe's lr_policy formulas (fixed, step, exp, inv, multistep, poly,
// sigmoid), cosine annealing with warm restarts ("sgdr"), one cycle
// ("onecycle"), and a warm-up in front of any of them. The forks' "plateau"
// policy alone also follows the training loss: its state (PlateauState)
// advances with the smoothed loss, and the rate is a function of the
// iteration and that state's step.
#ifndef CREMA_LR_SCHEDULE_HPP_
#define CREMA_LR_SCHEDULE_HPP_

#include <limits>
#include <string>

#include "crema/proto/crema.pb.h"

namespace crema {

// Refuses, naming the field, a solver setting that is not finite (or, where
// non_negative, negative): it would train garbage (NaN weights into a
// snapshot) or nothing without a word. The one check of a number the solver
// and the schedule read.
void RequireFinite(double value, const char* field, bool non_negative = false);

// Refuses, naming the field, settings the schedule cannot follow: an unknown
// policy or warm-up policy, a policy's missing or meaningless setting, a
// warm-up longer than max_iter.
void RequireScheduleMeaningful(const SolverParameter& param);

// The "plateau" policy of R-FCN (Microsoft), NVCaffe, MobileNet-YOLO and
// Intel: the rate is base_lr * gamma^step, and step grows by one whenever
// plateau_winsize[step] iterations pass without a new minimum of the
// smoothed training loss (or since the last step).
struct PlateauState {
  float minimum_loss = std::numeric_limits<float>::max();
  int iter_last_event = 0;  // the last new minimum or step
  int step = 0;
};

// After iteration iter's loss (smoothed over average_loss iterations): a
// new minimum is an event; then, while steps remain, one more step where
// plateau_winsize[step] iterations have passed since the last event (the
// step is an event too). Nothing moves while a warm-up or ramp-up lasts, as
// in the forks, where those replace the policy.
void AdvancePlateau(const SolverParameter& param, int iter, float smoothed_loss,
                    PlateauState* state);

// The rate at iteration iter (of a schedule RequireScheduleMeaningful
// passed); plateau_step: the "plateau" policy's step, unread by the others.
double LearningRate(const SolverParameter& param, int iter, int plateau_step = 0);

// One line for the log: the schedule in words and its rate at a few
// iterations, e.g. "sgdr (period 1000, p_mult 2, ...) after a linear
// warm-up of 100 iterations from 0; lr at 0: 0, 100: 0.1, ...".
std::string DescribeSchedule(const SolverParameter& param);

}  // namespace crema

#endif  // CREMA_LR_SCHEDULE_HPP_
