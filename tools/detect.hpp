// `crema detect`: runs an SSD-style deploy net (its last output a
// DetectionOutput top) over image files and prints each detection as one JSON
// line. Needs a build with OpenCV (CREMA_OPENCV).
#ifndef CREMA_TOOLS_DETECT_HPP_
#define CREMA_TOOLS_DETECT_HPP_

// Uses the tool's --model, --weights, --images and --scale, and its own
// --threshold, --labelmap, --mean_value and --output_dir. The caller has set
// the mode (--gpu). Prints to stdout, one line per detection scoring at least
// --threshold:
//   {"image": "a.png", "label": 12, "name": "dog", "score": 0.8731,
//    "box": [xmin, ymin, xmax, ymax]}   (pixels of the image as read)
// With --output_dir, writes <dir>/<image's name less extension>.png, the
// image with its boxes drawn. User errors are crema::Error.
int Detect();

#endif  // CREMA_TOOLS_DETECT_HPP_
