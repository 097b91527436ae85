# Install rules and the Debian package (CPack).
#
# The layout under any prefix (ste finds its parts relative to its own
# binary, indexer/src/traced_run.cc, so the tree works wherever it is
# unpacked: /usr, /usr/local, $HOME/.local, a folder in a CI tool cache):
#
#   bin/ste                              the command
#   lib/ste/libste_preload.so            the interceptor (a private library:
#                                        not on the linker's path)
#   lib/ste/libste_rpc.so                the commands that talk gRPC (record,
#                                        scheduler, worker, select
#                                        --scheduler), loaded by `ste` when
#                                        one of them runs (cli/rpc_module.h)
#   lib/ste/ste-checkout                 the worker containers' checkout
#                                        helper (deploy/README.md)
#   lib/ste/python/_ste_tracer.*.so      the Python definition tracker's
#                                        fast backend (CPython 3.11; found
#                                        beside the interceptor, ste_defs.py)
#   lib/ste/python/ste_site/*.pyc        ste's Python start-up modules,
#                                        compiled (ste_site/ste_boot.py)
#   share/ste/integrations/              the runner integrations
#   share/ste/ci/ste-ci.sh               the CI steps (any CI; the GitHub
#                                        actions call the same script)
#   share/doc/ste/                       README, CHANGELOG, deploy examples
#
# `make package` (Makefile) builds ste and the preload library and runs
# cpack: build/ste_<version>_<arch>.deb, its Depends computed by
# dpkg-shlibdeps from what the three binaries link (the Python extension
# links no library: the interpreter provides its symbols).
set(STE_PRIVATE_LIBDIR lib/ste)

install(TARGETS ste RUNTIME DESTINATION bin)
install(TARGETS ste_preload ste_rpc LIBRARY DESTINATION ${STE_PRIVATE_LIBDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/ste-checkout.sh
  DESTINATION ${STE_PRIVATE_LIBDIR} RENAME ste-checkout)
if(TARGET ste_python_tracer)
  install(TARGETS ste_python_tracer LIBRARY DESTINATION ${STE_PRIVATE_LIBDIR}/python)
endif()
if(TARGET ste_site_bytecode)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/python/ste_site DESTINATION ${STE_PRIVATE_LIBDIR}/python)
endif()
# (ste_tracer/: the extension's sources, built above)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/integrations/ DESTINATION share/ste/integrations
  PATTERN __pycache__ EXCLUDE
  PATTERN ste_tracer EXCLUDE
  PATTERN "*.pyc" EXCLUDE)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/github/ste-ci.sh DESTINATION share/ste/ci)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION share/doc/ste)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/ DESTINATION share/doc/ste/deploy
  PATTERN "*.sh" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                             WORLD_READ WORLD_EXECUTE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ste)
set(CPACK_PACKAGE_VENDOR "ste")
set(CPACK_PACKAGE_CONTACT "ste maintainers <ste@example.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "selective test execution: run only the tests a change can affect")
set(CPACK_PACKAGE_DESCRIPTION
  "ste records what every test opens (an LD_PRELOAD library, in every child\n"
  "process) and, for a change, selects the tests whose dependencies changed.\n"
  "Any doubt runs every test.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# git: the commit facts of a checkout (ste select, ste record); libpq5: a
# PostgreSQL store's connections (store/src/pg_conn.cc loads libpq.so.5
# with the first one). Both found at run time, not linked, so
# dpkg-shlibdeps cannot see them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "git, libpq5")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/your-org/ste")
# Only the install rules above: nothing of the tests is installed.
include(CPack)
