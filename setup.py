"""Package discovery from the tree (the metadata is in pyproject.toml).

Every folder under ``s1gym/`` is a package (of code or of data), and so are ``policies/`` and ``wrappers/``
(with anything under them) under the import names ``s1gym.policies`` and ``s1gym.wrappers``: three top-level
folders show the three parts, one import name holds them, nothing generic lands in site-packages.
``tests/test_wheel.py`` checks that the built wheel holds every such folder.
"""

from setuptools import find_namespace_packages, find_packages, setup

MAPPED = {"s1gym.policies": "policies", "s1gym.wrappers": "wrappers"}

# every folder of s1gym/, those of data (s1gym/data, replay assets) too: setuptools' advice for folders a wheel
# carries; their files come in through package-data in pyproject.toml
packages = find_namespace_packages(include=["s1gym", "s1gym.*"])
package_dir = {"s1gym": "s1gym"}
for name, folder in MAPPED.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
