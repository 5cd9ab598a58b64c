// The learning rate at each iteration, a function of the solver's settings
// and the iteration alone (so a resumed run follows the same schedule):
// Caffe's lr_policy formulas (fixed, step, exp, inv, multistep, poly,
// sigmoid), cosine annealing with warm restarts ("sgdr"), one cycle
// ("onecycle"), and a warm-up in front of any of them.
#ifndef CREMA_LR_SCHEDULE_HPP_
#define CREMA_LR_SCHEDULE_HPP_

#include <string>

#include "crema/proto/crema.pb.h"

namespace crema {

// Refuses, naming the field, settings the schedule cannot follow: an unknown
// policy or warm-up policy, a policy's missing or meaningless setting, a
// warm-up longer than max_iter.
void RequireScheduleMeaningful(const SolverParameter& param);

// The rate at iteration iter (of a schedule RequireScheduleMeaningful passed).
double LearningRate(const SolverParameter& param, int iter);

// One line for the log: the schedule in words and its rate at a few
// iterations, e.g. "sgdr (period 1000, p_mult 2, ...) after a linear
// warm-up of 100 iterations from 0; lr at 0: 0, 100: 0.1, ...".
std::string DescribeSchedule(const SolverParameter& param);

}  // namespace crema

#endif  // CREMA_LR_SCHEDULE_HPP_
