{
  description = "hall (crate hallmark): an agent-first development loop for any git repository";

  # No flake.lock is committed yet: it could not be generated offline where this file was
  # written. The first `nix build` writes one; commit it (docs/nix.md).
  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    rust-overlay = {
      url = "github:oxalica/rust-overlay";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      rust-overlay,
    }:
    let
      inherit (nixpkgs) lib;

      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];

      pkgsFor = lib.genAttrs systems (
        system:
        import nixpkgs {
          inherit system;
          overlays = [ rust-overlay.overlays.default ];
        }
      );

      forAllSystems = f: lib.genAttrs systems (system: f pkgsFor.${system});

      # The toolchain (version, components, the wasm32-wasip2 target) comes from
      # rust-toolchain.toml alone, for the package and the dev shell alike.
      toolchainFor = pkgs: pkgs.rust-bin.fromRustupToolchainFile ./rust-toolchain.toml;

      # Both lockfiles feed one vendor directory (see cargoDeps below). That is only sound
      # while every locked crate comes from crates.io and a crate locked in both files is
      # the same archive in both; say so at evaluation time rather than fail mid-build.
      cratesIo = "registry+https://github.com/rust-lang/crates.io-index";
      lockfiles = [
        ./Cargo.lock
        ./rooms/Cargo.lock
      ];
      lockedCrates =
        lockfile: builtins.filter (p: p ? source) (builtins.fromTOML (builtins.readFile lockfile)).package;
      allLocked = builtins.concatMap lockedCrates lockfiles;
      notFromCratesIo = builtins.filter (p: p.source != cratesIo) allLocked;
      checksumsByCrate = builtins.mapAttrs (_: ps: builtins.attrNames (builtins.groupBy (p: p.checksum) ps)) (
        builtins.groupBy (p: "${p.name}-${p.version}") allLocked
      );
      disagreeing = builtins.attrNames (
        lib.filterAttrs (_: sums: builtins.length sums > 1) checksumsByCrate
      );
      lockfilesMergeable =
        if notFromCratesIo != [ ] then
          throw "flake.nix vendors crates.io only; not from crates.io: ${
            toString (map (p: "${p.name}-${p.version} (${p.source})") notFromCratesIo)
          }"
        else if disagreeing != [ ] then
          throw "Cargo.lock and rooms/Cargo.lock disagree on the checksum of: ${toString disagreeing}"
        else
          true;

      hallFor =
        pkgs:
        let
          toolchain = toolchainFor pkgs;
          rustPlatform = pkgs.makeRustPlatform {
            cargo = toolchain;
            rustc = toolchain;
          };
          hostTarget = pkgs.stdenv.hostPlatform.rust.rustcTarget;
          hostCrates = rustPlatform.importCargoLock { lockFile = ./Cargo.lock; };
          roomCrates = rustPlatform.importCargoLock { lockFile = ./rooms/Cargo.lock; };
        in
        assert lockfilesMergeable;
        rustPlatform.buildRustPackage {
          pname = "hall";
          version = (builtins.fromTOML (builtins.readFile ./Cargo.toml)).workspace.package.version;

          # What the build reads: the workspace, the rooms workspace (and the host/core
          # crate its SDK uses), the WIT package and the plugin files `hall` embeds.
          src = lib.fileset.toSource {
            root = ./.;
            fileset = lib.fileset.unions [
              ./Cargo.toml
              ./Cargo.lock
              ./host
              ./tests
              ./rooms
              ./wit
              ./plugin
            ];
          };

          # host/rooms/build.rs builds rooms/ with a nested `cargo build`, which finds the same
          # .cargo/config.toml (written by cargoSetupHook above the source root) as the
          # outer build. So one vendor directory holds the crates of both lockfiles: each
          # lockfile vendored by importCargoLock, then merged. Cargo.lock is the root
          # lockfile, which cargoSetupHook compares with the source's.
          cargoDeps = pkgs.runCommand "hall-vendored-crates" { } ''
            mkdir -p $out/.cargo
            for vendored in ${hostCrates} ${roomCrates}; do
              for crate in "$vendored"/*; do
                name=$(basename "$crate")
                if [ "$name" != Cargo.lock ] && [ ! -e "$out/$name" ]; then
                  ln -s "$(readlink -f "$crate")" "$out/$name"
                fi
              done
            done
            cp ${./Cargo.lock} $out/Cargo.lock
            cat > $out/.cargo/config.toml <<'EOF'
            [source.crates-io]
            replace-with = "vendored-sources"

            [source.vendored-sources]
            directory = "@vendor@"
            EOF
          '';

          env = {
            # The nested rooms build gets no --offline flag from host/rooms/build.rs; this
            # reaches it through the environment.
            CARGO_NET_OFFLINE = "true";
            # host/hall/build.rs asks git for the commit; the sandbox has no git and no .git.
            HALL_BUILD_COMMIT = self.rev or self.dirtyRev or "unknown";
          };

          cargoBuildFlags = [
            "-p"
            "hallmark"
            "--bin"
            "hall"
          ];

          # host/rooms/build.rs does not pass --locked to the nested rooms build: check here that
          # rooms/Cargo.lock is complete and current, so that build cannot re-resolve.
          preBuild = ''
            cargo metadata --locked --offline --format-version 1 \
              --manifest-path rooms/Cargo.toml > /dev/null
          '';

          # Our own build phase instead of cargoBuildHook: that hook exports
          # CARGO_PROFILE_RELEASE_STRIP=false, which would override rooms' `strip = true`
          # and change the embedded .wasm (size and sha256) if it reached the nested rooms
          # build. host/rooms/build.rs now drops every CARGO_PROFILE_* variable before that build;
          # this phase stays as the one reviewed.
          # cargoInstallHook (a postBuild hook) still installs target/<triple>/release/hall.
          buildPhase = ''
            runHook preBuild
            cargo build -j "$NIX_BUILD_CORES" --frozen --release \
              --target ${hostTarget} $cargoBuildFlags
            runHook postBuild
          '';

          # The test suite drives real git, tmux, Chromium, D-Bus and network stubs, none of
          # which the build sandbox has; CI runs it (.ci/run).
          doCheck = false;

          meta = {
            description = "An agent-first development loop for any git repository";
            license = lib.licenses.mit;
            mainProgram = "hall";
            platforms = systems;
          };
        };
    in
    {
      packages = forAllSystems (
        pkgs:
        let
          hall = hallFor pkgs;
        in
        {
          inherit hall;
          default = hall;
        }
      );

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = lib.getExe self.packages.${pkgs.stdenv.hostPlatform.system}.hall;
          meta.description = "Run hall";
        };
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [
            (toolchainFor pkgs)
            pkgs.git
            pkgs.tmux
            pkgs.sqlite
          ];
        };
      });

      formatter = forAllSystems (pkgs: pkgs.nixfmt);
    };
}
