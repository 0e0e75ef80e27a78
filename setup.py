"""Builds the moesim Python module with the project's CMake (target moesim_python) for `pip install .`.

The extension is built in the build folder scripts/build uses (build/, or $MOESIM_BUILD_DIR), for the Python running
pip; only its target is built. The package gets the bundled presets and traces (data/) so that it works once the
clone is gone: the package's __init__ points MOESIM_DATA at them unless it is set.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.environ.get("MOESIM_BUILD_DIR") or os.path.join(ROOT, "build"))
        configure = ["cmake", "-S", ROOT, "-B", build, "-DMOESIM_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            configure += ["-DCMAKE_BUILD_TYPE=Release"] + (["-G", "Ninja"] if shutil.which("ninja") else [])
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "--target", "moesim_python", "-j", str(os.cpu_count() or 1)])
        built = os.path.join(build, "python", "moesim")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        core = [f for f in os.listdir(built) if f.startswith("_core") and f.endswith(".so")]
        shutil.copyfile(os.path.join(built, core[0]), target)
        data = os.path.join(os.path.dirname(target), "data")
        shutil.rmtree(data, ignore_errors=True)
        for kind in ("models", "hardware", "traces"):
            shutil.copytree(os.path.join(ROOT, "data", kind), os.path.join(data, kind))


setup(
    packages=["moesim"],
    package_dir={"moesim": "python/moesim"},
    ext_modules=[Extension("moesim._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
