// `crema classify`: runs a deploy net over image files and prints each
// image's top classes. Needs a build with OpenCV (CREMA_OPENCV).
#ifndef CREMA_TOOLS_CLASSIFY_HPP_
#define CREMA_TOOLS_CLASSIFY_HPP_

// Uses the tool's --model and --weights, and its own --images, --labels,
// --mean_file, --scale and --top_k. The caller has set the mode (--gpu).
// Prints one line per image to stdout:
//   <path>: <label> <prob>, <label> <prob>, ...
// User errors are crema::Error.
int Classify();

#endif  // CREMA_TOOLS_CLASSIFY_HPP_
