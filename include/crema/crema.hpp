// Crema's public API in one include: the runtime, blobs, layers (the base
// classes a layer of your own derives from, and the registry), nets, solvers,
// data-parallel training and the file helpers. Everything under
// include/crema/ is public; what is not here is internal to the library.
#ifndef CREMA_CREMA_HPP_
#define CREMA_CREMA_HPP_

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/data_reader.hpp"
#include "crema/data_transformer.hpp"
#include "crema/filler.hpp"
#include "crema/internal_thread.hpp"
#include "crema/layer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/layers/base_data_layer.hpp"
#include "crema/layers/loss_layer.hpp"
#include "crema/layers/memory_data_layer.hpp"
#include "crema/layers/neuron_layer.hpp"
#include "crema/net.hpp"
#include "crema/parallel.hpp"
#include "crema/reporter.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/solver.hpp"
#include "crema/syncedmem.hpp"
#include "crema/util/benchmark.hpp"
#include "crema/util/db.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"
#include "crema/util/math_functions.hpp"
#include "crema/util/upgrade_proto.hpp"

#endif  // CREMA_CREMA_HPP_
