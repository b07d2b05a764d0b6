# Install rules (FHS, as Debian lays out a system daemon). Included last by the
# top-level CMakeLists.txt, so every target exists (or never will); each rule is
# guarded with if(TARGET ...) while parts of the tree land. debian/rules builds the
# packages from these components.
#
#   cmake --install build                    # package unetback (component "daemon")
#   cmake --install build --component sim    # package unetback-sim: sim-xl, netfront-sim,
#                                            # sim-xenstored
#
# Paths outside the prefix are absolute (Debian keeps units in /lib/systemd/system and
# conffiles in /etc whatever the prefix); DESTDIR still applies to them.

if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix (a system daemon: /usr)" FORCE)
endif()

set(UNETBACK_SYSTEMD_UNIT_DIR /lib/systemd/system CACHE PATH "systemd system unit directory")
set(UNETBACK_MODPROBE_DIR /lib/modprobe.d CACHE PATH "modprobe.d directory for the blacklist")
set(UNETBACK_MODULES_LOAD_DIR /lib/modules-load.d CACHE PATH "modules-load.d directory (tun)")
set(UNETBACK_UDEV_RULES_DIR /lib/udev/rules.d CACHE PATH "udev rules directory (Xen devices' group)")
set(UNETBACK_TMPFILES_DIR /usr/lib/tmpfiles.d CACHE PATH "tmpfiles.d directory (/run/unetback)")
set(UNETBACK_CONFIG_DIR /etc/unetback CACHE PATH "unetbackd's configuration directory")
set(UNETBACK_XEN_SCRIPT_DIR /etc/xen/scripts CACHE PATH "Xen hotplug script directory")

set(_pkg_src ${PROJECT_SOURCE_DIR})
set(_pkg_doc ${CMAKE_INSTALL_DATADIR}/doc/unetback)

# ---- programs ----
foreach(_prog IN ITEMS unetbackd unetbackctl)
  if(TARGET ${_prog})
    install(TARGETS ${_prog} RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT daemon)
  endif()
endforeach()
# The simulation (tests, demos) is not part of a host install.
foreach(_prog IN ITEMS sim-xl netfront-sim sim-xenstored)
  if(TARGET ${_prog})
    install(TARGETS ${_prog} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT sim EXCLUDE_FROM_ALL)
  endif()
endforeach()

# ---- service integration ----
install(FILES ${_pkg_src}/tools/systemd/unetbackd.service
        DESTINATION ${UNETBACK_SYSTEMD_UNIT_DIR} COMPONENT daemon)
install(FILES ${_pkg_src}/tools/modprobe/unetback.conf
        DESTINATION ${UNETBACK_MODPROBE_DIR} COMPONENT daemon)
install(FILES ${_pkg_src}/tools/modprobe/unetback-tun.conf
        DESTINATION ${UNETBACK_MODULES_LOAD_DIR} RENAME unetback.conf COMPONENT daemon)
install(FILES ${_pkg_src}/tools/udev/60-unetback.rules
        DESTINATION ${UNETBACK_UDEV_RULES_DIR} COMPONENT daemon)
install(FILES ${_pkg_src}/tools/systemd/unetback.tmpfiles
        DESTINATION ${UNETBACK_TMPFILES_DIR} RENAME unetback.conf COMPONENT daemon)
install(FILES ${_pkg_src}/tools/systemd/unetback.toml.example
        DESTINATION ${UNETBACK_CONFIG_DIR} RENAME unetback.toml COMPONENT daemon)
install(PROGRAMS ${_pkg_src}/tools/hotplug/vif-bridge-unetback
        DESTINATION ${UNETBACK_XEN_SCRIPT_DIR} COMPONENT daemon)

# ---- documentation ----
install(FILES
          ${_pkg_src}/README.md
          ${_pkg_src}/docs/operator-guide.md
          ${_pkg_src}/docs/xl.md
          ${_pkg_src}/docs/architecture.md
          ${_pkg_src}/tools/systemd/unetback.toml.example
          ${_pkg_src}/tools/prometheus/unetback.rules.yml
        DESTINATION ${_pkg_doc} COMPONENT daemon)

# Man pages, compressed in the build (Debian policy wants them gzipped, in a
# `cmake --install` tree as in the package; -n keeps the archive reproducible).
set(_man_outputs)
# unetback_man_page(PAGE INSTALL_ARGS...): docs/man/PAGE gzipped, installed into its
# section with INSTALL_ARGS (the component of the program it documents).
function(unetback_man_page _page)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" _section ${_page})
  set(_out ${CMAKE_BINARY_DIR}/man/${_page}.gz)
  add_custom_command(OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9nc ${_pkg_src}/docs/man/${_page} > ${_out}
    DEPENDS ${_pkg_src}/docs/man/${_page}
    COMMENT "Compressing man page ${_page}"
    VERBATIM)
  install(FILES ${_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_section} ${ARGN})
  set(_man_outputs ${_man_outputs} ${_out} PARENT_SCOPE)
endfunction()
foreach(_page IN ITEMS unetbackd.8 unetbackctl.8 unetback.toml.5)
  unetback_man_page(${_page} COMPONENT daemon)
endforeach()
foreach(_page IN ITEMS sim-xl.1 sim-xenstored.1 netfront-sim.1)
  unetback_man_page(${_page} COMPONENT sim EXCLUDE_FROM_ALL)
endforeach()
add_custom_target(unetback_man ALL DEPENDS ${_man_outputs})
