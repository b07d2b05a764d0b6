# Install rules (FHS, as Debian lays out a system daemon) and the .deb (CPack).
# Included last by the top-level CMakeLists.txt, so every target exists (or never
# will); each rule is guarded with if(TARGET ...) while parts of the tree land.
#
#   cmake --install build                    # the daemon package's files (component "daemon")
#   cmake --install build --component sim    # also sim-xl, netfront-sim, sim-xenstored
#   cpack --config build/CPackConfig.cmake   # build/unetback_<version>_<arch>.deb
#
# Paths outside the prefix are absolute (Debian keeps units in /lib/systemd/system and
# conffiles in /etc whatever the prefix); DESTDIR still applies to them.

if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix (a system daemon: /usr)" FORCE)
endif()

set(UNETBACK_SYSTEMD_UNIT_DIR /lib/systemd/system CACHE PATH "systemd system unit directory")
set(UNETBACK_MODPROBE_DIR /lib/modprobe.d CACHE PATH "modprobe.d directory for the blacklist")
set(UNETBACK_MODULES_LOAD_DIR /lib/modules-load.d CACHE PATH "modules-load.d directory (tun)")
set(UNETBACK_CONFIG_DIR /etc/unetback CACHE PATH "unetbackd's configuration directory")
set(UNETBACK_XEN_SCRIPT_DIR /etc/xen/scripts CACHE PATH "Xen hotplug script directory")
set(UNETBACK_PACKAGE_MAINTAINER "unetback developers <unetback@localhost>"
  CACHE STRING "Maintainer field of the .deb")

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

# Man pages, compressed in the build (CPack's DEB generator does not compress them,
# Debian policy wants them gzipped; -n keeps the archive reproducible).
set(_man_pages unetbackd.8 unetbackctl.8 unetback.toml.5)
set(_man_outputs)
foreach(_page IN LISTS _man_pages)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" _section ${_page})
  set(_out ${CMAKE_BINARY_DIR}/man/${_page}.gz)
  add_custom_command(OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9nc ${_pkg_src}/docs/man/${_page} > ${_out}
    DEPENDS ${_pkg_src}/docs/man/${_page}
    COMMENT "Compressing man page ${_page}"
    VERBATIM)
  list(APPEND _man_outputs ${_out})
  install(FILES ${_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_section} COMPONENT daemon)
endforeach()
add_custom_target(unetback_man ALL DEPENDS ${_man_outputs})

# ---- the .deb ----
# dpkg-shlibdeps (package dpkg-dev) computes Depends from the binaries' libraries
# (libc6, libstdc++6, libxenstore4, libxengnttab1, libxenevtchn1, libsystemd0,
# libcap-ng0, libspdlog1.10, libfmt9, ...); the rest are the programs the hotplug
# script runs. xl itself (xen-utils-4.17) is recommended, not required: a driver
# domain runs `xl devd` from the same package, a test host may have none.
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/packaging/conffiles CONTENT
"${UNETBACK_CONFIG_DIR}/unetback.toml
${UNETBACK_XEN_SCRIPT_DIR}/vif-bridge-unetback
")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME unetback)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR unetback)
set(CPACK_PACKAGE_CONTACT "${UNETBACK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "userspace Xen network backend (serves xl's vif devices)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# CPack puts the summary first and wraps and indents this text itself.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"unetbackd runs in dom0 in place of the kernel's xen-netback: it answers the \
xenbus handshake of the vif devices xl creates, negotiates multi-queue and \
offloads with the guest's netfront, and moves packets between the guest's rings \
and a TAP device vif<domid>.<devid> per vif, which the hotplug script adds to a \
bridge. Includes the systemd unit, the xen-netback blacklist, unetbackctl \
(per-queue counters, ring dumps) and a hotplug script.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "xenstore-utils, iproute2")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xen-utils-4.17")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_BINARY_DIR}/packaging/conffiles
  ${_pkg_src}/tools/systemd/debian/postinst
  ${_pkg_src}/tools/systemd/debian/prerm
  ${_pkg_src}/tools/systemd/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Only the daemon component (the sim tools are EXCLUDE_FROM_ALL anyway).
set(CPACK_COMPONENTS_ALL daemon)
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};daemon;/")
include(CPack)
