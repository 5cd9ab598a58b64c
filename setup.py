"""pip install of the crema Python package from this checkout, offline:

    /usr/bin/python3 -m venv --system-site-packages ~/crema-env
    ~/crema-env/bin/pip install --no-build-isolation .

It builds the library and the extension with CMake (Release, no tests, in
build/python-package unless CREMA_BUILD_DIR names an existing build) and
installs the package with libcrema.so beside the extension (found through
its $ORIGIN run path). numpy and protobuf come from Debian's python3-numpy and
python3-protobuf (hence --system-site-packages).

It also installs `caffe`, the alias that answers `import caffe` with crema's
modules, unless CREMA_CAFFE_ALIAS=0 (for an environment that holds a real
Caffe's pycaffe).
"""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithCMake(build_py):
    """Builds crema_python with CMake, then copies the assembled package."""

    def run(self):
        build = pathlib.Path(os.environ.get("CREMA_BUILD_DIR", ROOT / "build/python-package"))
        if not (build / "CMakeCache.txt").exists():
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build),
                                   "-DCMAKE_BUILD_TYPE=Release", "-DCREMA_BUILD_TESTS=OFF",
                                   "-DCREMA_PYTHON=ON"])
        subprocess.check_call(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2),
                               "--target", "crema_python"])
        target = pathlib.Path(self.build_lib) / "crema"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(build / "python/crema", target,
                        ignore=shutil.ignore_patterns("__pycache__"))
        for library in build.glob("libcrema.so*"):
            shutil.copy2(library, target, follow_symlinks=True)
        alias = pathlib.Path(self.build_lib) / "caffe"
        if alias.exists():
            shutil.rmtree(alias)
        if with_caffe_alias():
            shutil.copytree(build / "python/caffe", alias,
                            ignore=shutil.ignore_patterns("__pycache__"))


def with_caffe_alias():
    """Whether to install the `caffe` alias (CREMA_CAFFE_ALIAS=0 leaves it out)."""
    return os.environ.get("CREMA_CAFFE_ALIAS", "1") not in ("0", "OFF", "off", "no")


class BinaryDistribution(Distribution):
    """The package holds compiled libraries: a platform wheel, not a pure one."""

    def has_ext_modules(self):
        return True


setup(
    name="crema",
    distclass=BinaryDistribution,
    version="0.1.0",
    description="Crema: a Caffe-compatible deep-learning framework (pycaffe's API)",
    packages=["crema", "crema.proto"] + (["caffe"] if with_caffe_alias() else []),
    package_dir={"": "python"},
    cmdclass={"build_py": BuildWithCMake},
    python_requires=">=3.9",
)
