"""Where the project's own executables are: build/FOLDER/EXECUTABLE beside this plugin (a
checkout built in place), else EXECUTABLE on PATH. No GDB: the plugin and `arenascope` both use it."""
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def built_tool(folder, executable):
    """The path of the executable, or None when neither the build tree nor PATH has it."""
    built = os.path.join(ROOT, "build", folder, executable)
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    return shutil.which(executable)
